/* Self- and inter-strand collision of one instance through a spatial hash (private). */
#ifndef PT_SELFCOLLIDE_H
#define PT_SELFCOLLIDE_H

#include "world_internal.h"

/* Allocates the hash storage when `on` (in->self_scratch: non-NULL exactly when
 * self-collision is on); 0 on allocation failure. */
int pt_self_collide_init(pt_inst *in, int on);
void pt_self_collide_free(pt_inst *in);

/* Pushes apart every pair of points closer than the sum of their radii, except a point
 * and its two neighbours on the same strand. */
void pt_self_collide(pt_world *w, pt_inst *in);

#endif
