/* The spring-bone wide kernel on the plain-C eight-lane emulation (any CPU). */
#include <stddef.h>
#include <string.h>

#include "springbone_lanes.h"
#include "wide.h"

#define SB_LANES_FN pt_sb_lanes_scalar
#define SB_LANES_ATTR
#include "springbone_lanes.inc"
