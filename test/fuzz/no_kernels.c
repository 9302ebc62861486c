/* The fuzz build links no CUDA kernels: an empty table of embedded library images. */
#include "library_images.h"

const sr_library_image sr_library_images[] = {{0, 0}};
