/* The k_mean sagerun computes for an inputs file, for the parity script (parity.py): quantizes
 * q, k, v with the public API on the given backend and writes k_mean's raw bytes.
 *   kmean_dump INPUTS.safetensors nhd|hnd cuda|host OUT.bin
 * The host backend plans the reduction for SAGERUN_TORCH_DEVICE ("SMSxTHREADS"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sagerun/plugin.h>
#include <sagerun/sagerun.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: kmean_dump INPUTS.safetensors nhd|hnd cuda|host OUT.bin\n");
        return 2;
    }
    int layout = strcmp(argv[2], "hnd") == 0 ? SAGERUN_LAYOUT_HND : SAGERUN_LAYOUT_NHD;
    int backend = strcmp(argv[3], "host") == 0 ? SAGERUN_BACKEND_HOST : SAGERUN_BACKEND_CUDA;
    sagerun_error err = {0};
    sagerun_context *ctx = NULL;
    sagerun_inputs *in = NULL;
    sagerun_sage2_tensors t = {.struct_size = sizeof t};
    sagerun_sage2_quant_params qp = {sizeof qp, 32, 128, 64, 64, 448.0f};
    if (sagerun_context_create(backend, 0, &ctx, &err) != SAGERUN_OK ||
        sagerun_inputs_create_from_safetensors(ctx, argv[1], layout, &in, &err) != SAGERUN_OK ||
        sagerun_sage2_quantize(in, &qp, &t, &err) != SAGERUN_OK) {
        fprintf(stderr, "kmean_dump: %s\n", err.message);
        return 1;
    }
    const sagerun_problem *p = sagerun_inputs_problem(in);
    size_t bytes = (size_t)p->batch * p->heads_kv * p->head_dim * 2;
    void *buf = malloc(bytes);
    FILE *out = fopen(argv[4], "wb");
    if (!buf || !out || sagerun_mem_download(ctx, buf, t.k_mean, bytes, &err) != SAGERUN_OK ||
        fwrite(buf, 1, bytes, out) != bytes || fclose(out) != 0) {
        fprintf(stderr, "kmean_dump: %s\n", err.message[0] ? err.message : "writing the output");
        return 1;
    }
    free(buf);
    sagerun_sage2_tensors_free(ctx, &t);
    sagerun_inputs_destroy(in);
    sagerun_context_destroy(ctx);
    return 0;
}
