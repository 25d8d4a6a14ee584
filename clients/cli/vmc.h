/* `ponytail vmc`: the VMC protocol (OSC over UDP, as VSeeFace, XR Animator, VMagicMirror,
 * Warudo and VNyan send it) turned into head poses for an instance.
 *
 *   vmc_convert.c  Unity's left-handed frame to ours, transforms chained parent to child,
 *                  the head from the tracker or the Hips..Head bone chain (no I/O)
 *   vmc_parse.c    one UDP packet (a message or a bundle, nested bundles included) through
 *                  liblo's OSC decoder into a vmc_state, with counters for what is dropped
 *   vmc.c          the command: sockets, --forward, publishing through the client library
 *   vmc_out.c      the status each second (text or --json) and --hair-out's joint bundles
 *   vmc_bridge.h   the state those two share
 *
 * Frames. Unity (and so VMC) is left-handed, +Y up, +Z forward; ours is right-handed, +Y up
 * (core/README.md "Units and axes"). The reflection z -> -z maps one onto the other: a position
 * (x, y, z) becomes (x, y, -z) and a quaternion [x, y, z, w] becomes [-x, -y, z, w] (a
 * rotation by a about axis n becomes a rotation by -a about the mirrored axis (nx, ny,
 * -nz): the vector part is mirrored and negated). The map is its own inverse and keeps
 * products, so chaining in either frame gives the same head. */
#ifndef PONYTAIL_CLI_VMC_H
#define PONYTAIL_CLI_VMC_H

#include <stddef.h>
#include <stdint.h>

/* A rigid transform: rotate by q, then translate by p. q is [x, y, z, w]. */
typedef struct vmc_xf {
	double p[3];
	double q[4];
} vmc_xf;

/* Unity's frame to ours (and back: the same map). */
vmc_xf vmc_from_unity(vmc_xf u);

/* parent * child: a child given relative to its parent, expressed in the parent's frame. */
vmc_xf vmc_xf_mul(vmc_xf parent, vmc_xf child);

/* The bones of the chain from the hips to the head, in order. UpperChest is optional in
 * Unity's humanoid (and so in VMC); any bone of the chain not received is skipped. */
enum { VMC_HIPS, VMC_SPINE, VMC_CHEST, VMC_UPPER_CHEST, VMC_NECK, VMC_HEAD, VMC_NBONES };
extern const char *const vmc_bone_names[VMC_NBONES];

/* How long a /VMC/Ext/Tra/Pos "Head" keeps precedence over the bone chain after its last
 * arrival, us. */
#define VMC_TRACKER_HOLD_US 1000000

/* What has arrived, in our frame (converted on arrival). */
typedef struct vmc_state {
	int have_root, have_tracker;
	unsigned have_bone; /* bit per VMC_* bone */
	vmc_xf root, tracker, bone[VMC_NBONES];
	int64_t tracker_us; /* when the tracker head last arrived */
	int changed;        /* a pose input changed since the caller last cleared it */
	/* counters since start */
	uint64_t packets, messages, bundles;
	uint64_t malformed; /* not OSC, truncated or bad bundles, wrong argument types */
	uint64_t unknown;   /* addresses outside /VMC/ */
	uint64_t ignored;   /* /VMC/ addresses the head does not need (blend shapes, ...) */
	uint64_t nonfinite; /* messages with a NaN or infinite number */
} vmc_state;

/* The head in our frame: the tracker "Head" if it arrived within VMC_TRACKER_HOLD_US of
 * now_us, else Root * Hips * Spine * Chest * [UpperChest] * Neck * Head (Root is identity
 * until one arrives). 1 with *out set, 0 when neither is there (no Head bone yet). */
int vmc_head(const vmc_state *s, int64_t now_us, vmc_xf *out);

/* Decodes one UDP payload (a mutable buffer, left as it was) into s, counters included;
 * now_us stamps the tracker. Returns the number of messages used for the pose, or -1
 * when the packet or a bundle element cannot be decoded (counted; the messages before
 * the bad part still count). A pose message with wrong argument types is counted as
 * malformed and skipped, the rest of its bundle is read. */
int vmc_feed(vmc_state *s, void *data, size_t n, int64_t now_us);

#endif
