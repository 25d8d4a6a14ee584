/* Private to sim_touch.c (hands) and sim_grab.c (grabs): the tick thread's state of touch
 * and grabs (server/README.md "Touch and grabs"). Sim thread only. */
#ifndef SERVER_SIM_TOUCH_INTERNAL_H
#define SERVER_SIM_TOUCH_INTERNAL_H

#include "ponytail/touch.h"
#include "grow.h"
#include "sim_internal.h"

/* The bones of a hand: index 0/1 the left/right hand, 2..16 the left fingers
 * (pt_bone 24..38), 17..31 the right ones (39..53). */
enum { HAND_BONES = 32, HAND_COLS = 16 };
/* Defaults (README): a hand is a sphere of 5 cm at the hand bone, or a capsule of 4 cm to
 * its middle_proximal when that is sent too; a finger bone a capsule of 1 cm to the next
 * bone of its finger when that is sent, else a sphere of 1 cm. */
#define PALM_R 0.05f
#define PALM_CAPSULE_R 0.04f
#define FINGER_R 0.01f
/* What a point may move within a step beyond its last position, for the cull, m. */
#define TOUCH_SLACK 0.1f


typedef struct own_col_t {
	int k;       /* hand index of its bone */
	int shape;   /* PT_SHAPE_SPHERE or _CAPSULE */
	float radius;
	pt_vec3 a, b; /* bone-local */
} own_col_t;

typedef struct hands_t {
	pt_pose now[HAND_BONES];  /* newest pose taken */
	pt_pose prev[HAND_BONES]; /* the pose its colliders had last tick (active bones) */
	uint64_t tick[HAND_BONES]; /* the tick that took `now`; 0: none */
	uint64_t conn[HAND_BONES]; /* the connection it came by (0: REST) */
	uint32_t active;           /* bones that made colliders last tick */
} hands_t;

struct sim_tx_t {
	interact_t ia; /* valid when has_ia (a listed mode) */
	int has_ia;
	own_col_t *own; /* its definition's colliders on hand bones */
	int nown;
	hands_t *hands;
	int rec_valid;  /* rec_idx is what its recording last got (TOUCH) */
	int rec_n;
	uint16_t rec_idx[PT_MAX_TOUCH];
};

typedef struct grab_t {
	grab_info_t g;
	uint64_t conn;
	pt_vec3 t0, t1; /* this tick's target: the hand bone's position last tick and now */
	int has_last;   /* t1 holds last tick's target */
} grab_t;

typedef struct ent_t { /* whose a collider of the hand table is */
	uint64_t owner;
	int side; /* 0 left hand, 1 right (with its fingers) */
} ent_t;

typedef struct cand_t {
	float d;
	int idx;
} cand_t;

struct sim_touch_t {
	grab_t *grabs; /* by (instance, gid) */
	int ngrabs, cap_grabs;
	uint64_t next_gid;
	int *touchers; /* slots of instances with hands */
	int ntouchers, cap_touchers;
	uint64_t *touched, *touched_next; /* ids given touch last tick / this tick */
	int ntouched, ntouched_next, cap_touched, cap_touched_next;
	pt_touch *tab; /* one room's hand table, this tick: its colliders (as recorded) */
	ent_t *who;    /* and whose each is */
	int ntab, cap_tab, cap_who;
	cand_t *cand;
	int cap_cand;
	cmd_t **pending; /* CMD_GRABs of this tick: checked after its poses (simgrab_tick) */
	int npending, cap_pending;
	uint64_t dropped_logged; /* hands past the room's limit, logged once */
};

static inline int simtouch_hand_index(int bone)
{
	if (bone == PT_BONE_LEFT_HAND)
		return 0;
	if (bone == PT_BONE_RIGHT_HAND)
		return 1;
	if (bone >= PT_BONE_LEFT_THUMB_METACARPAL && bone < PT_BONE_COUNT)
		return 2 + bone - PT_BONE_LEFT_THUMB_METACARPAL;
	return -1;
}

/* sim_touch.c */
sim_touch_t *simtouch_state(sim_t *s);      /* made on first use; NULL out of memory */
struct sim_tx_t *simtouch_tx(sim_inst_t *in); /* the same */
int simtouch_grants(const sim_inst_t *in, int mode, uint64_t who, int same_room);
int simtouch_same_room(const sim_inst_t *a, const sim_inst_t *b);
uint64_t simtouch_hold(const sim_t *s); /* --hand-hold-ms in ticks */
int simtouch_fresh(const sim_t *s, const hands_t *h, int k);

/* sim_grab.c: this tick's new grabs checked, every grab checked, ended or given to core */
void simgrab_tick(sim_t *s, sim_touch_t *T);
/* a WebSocket grab or release (cmd->grab->reply): its answer into the frame ring */
void simgrab_reply(sim_t *s, const cmd_t *c);

#endif
