/* Exists only for `make check-abi`: a shared object whose one exported function takes every
 * struct of the plugin ABI, so that abidw records their layout and abidiff can compare it with
 * the committed baseline (plugins and sagerun exchange these structs, not functions). */
#include <sagerun/plugin.h>

__attribute__((visibility("default"))) void
sagerun_plugin_abi_probe(sagerun_plugin_query *query, sagerun_plugin_answer *answer,
                         sagerun_variant_descriptor *descriptor, sagerun_host_services *services,
                         sagerun_plugin_inputs *inputs, sagerun_sage2_tensors *tensors,
                         sagerun_launch_geometry *geometry, sagerun_plugin_entry_fn entry);

void sagerun_plugin_abi_probe(sagerun_plugin_query *query, sagerun_plugin_answer *answer,
                              sagerun_variant_descriptor *descriptor,
                              sagerun_host_services *services, sagerun_plugin_inputs *inputs,
                              sagerun_sage2_tensors *tensors, sagerun_launch_geometry *geometry,
                              sagerun_plugin_entry_fn entry)
{
    (void)query, (void)answer, (void)descriptor, (void)services, (void)inputs, (void)tensors,
        (void)geometry, (void)entry;
}

/* The structs ABI 1.1 added (a function of its own: the 1.0 probe keeps its signature). */
__attribute__((visibility("default"))) void
sagerun_plugin_abi_probe_1_1(sagerun_plugin_factory *factory, sagerun_param_decl *param,
                             sagerun_plugin_device *device, sagerun_geometry_args *args);

void sagerun_plugin_abi_probe_1_1(sagerun_plugin_factory *factory, sagerun_param_decl *param,
                                  sagerun_plugin_device *device, sagerun_geometry_args *args)
{
    (void)factory, (void)param, (void)device, (void)args;
}

/* The structs ABI 1.2 added: the sage2 extension's table (sage2.h; the quant params and tensors
 * are the 1.0 probe's). */
__attribute__((visibility("default"))) void
sagerun_plugin_abi_probe_1_2(sagerun_sage2_extension *sage2, sagerun_sage2_quant_params *quant);

void sagerun_plugin_abi_probe_1_2(sagerun_sage2_extension *sage2, sagerun_sage2_quant_params *quant)
{
    (void)sage2, (void)quant;
}
