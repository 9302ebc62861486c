/* The quantizer as callers outside the library see it: sagerun_sage2_quantize (public API) and
 * the host-services entry sage2_quantize (what plugins call). On the host backend both must give
 * the golden files' Q and V scales exactly (SAGE2.md 1.2, 1.4: scales do not depend on the
 * reciprocal's rounding), and the same bytes as each other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sage2_golden.h"

static void quantize_through_api_and_services(void **state)
{
    (void)state;
    char paths[8][1024], why[1200];
    size_t n = golden_files(paths, 8, why, sizeof why);
    if (n == 0) {
        printf("SKIP: %s\n", why);
        skip();
    }
    sagerun_context *ctx;
    sagerun_error e;
    assert_int_equal(sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &ctx, &e), SAGERUN_OK);
    sagerun_sage2_quant_params params = sr_sage2_params_sm89(448.0f);
    for (size_t i = 0; i < n; i++) {
        sagerun_inputs *in;
        if (sagerun_inputs_create_from_safetensors(ctx, paths[i], SAGERUN_LAYOUT_NHD, &in, &e))
            fail_msg("%s", e.message);
        sagerun_sage2_tensors api, svc;
        if (sagerun_sage2_quantize(in, &params, &api, &e) != SAGERUN_OK)
            fail_msg("%s", e.message);
        char buf[256] = "";
        const sagerun_problem *p = sagerun_inputs_problem(in);
        const sagerun_host_services *s = &ctx->services;
        assert_true(s->struct_size >= offsetof(sagerun_host_services, sage2_tensors_free));
        assert_int_equal(s->sage2_quantize(s->host, p, in->q, in->k, in->v, &params, &svc, buf,
                                           sizeof buf),
                         SAGERUN_OK);
        sr_safetensors *f;
        assert_int_equal(sr_safetensors_open(paths[i], &f, &e), SAGERUN_OK);
        uint64_t qs_bytes, vs_bytes;
        float *q_scale = golden_read(f, "q_scale", &qs_bytes);
        float *v_scale = golden_read(f, "v_scale_f32acc", &vs_bytes);
        assert_non_null(q_scale);
        assert_non_null(v_scale);
        const float *api_q = (const float *)(uintptr_t)api.q_scale;
        const float *api_v = (const float *)(uintptr_t)api.v_scale;
        assert_memory_equal(api_q, q_scale, qs_bytes);
        assert_memory_equal(api_v, v_scale, vs_bytes);
        assert_memory_equal((const void *)(uintptr_t)svc.q_scale, api_q, qs_bytes);
        assert_memory_equal((const void *)(uintptr_t)svc.v_fp8, (const void *)(uintptr_t)api.v_fp8,
                            (uint64_t)p->batch * p->head_dim * p->heads_kv * api.v_len);
        printf("%s: q_scale (%llu B) and v_scale (%llu B) exact through both entry points\n",
               paths[i], (unsigned long long)qs_bytes, (unsigned long long)vs_bytes);
        free(q_scale);
        free(v_scale);
        sr_safetensors_close(f);
        s->sage2_tensors_free(s->host, &svc);
        sagerun_sage2_tensors_free(ctx, &api);
        sagerun_inputs_destroy(in);
    }
    sagerun_context_destroy(ctx);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    sagerun_error e;
    sagerun_sage2_tensors t;
    assert_int_equal(sagerun_sage2_quantize(NULL, NULL, &t, &e), SAGERUN_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "NULL"));
    sagerun_sage2_tensors_free(NULL, NULL); /* a no-op */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantize_through_api_and_services),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
