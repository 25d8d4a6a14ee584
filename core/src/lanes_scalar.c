/* The verlet wide kernel on the plain-C eight-lane emulation (any CPU). */
#include <stddef.h>
#include <string.h>

#include "verlet_lanes.h"
#include "wide.h"

#define LANES_FN pt_verlet_lanes_scalar
#define LANES_ATTR
#include "verlet_lanes.inc"
