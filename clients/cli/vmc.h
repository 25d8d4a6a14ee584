/* `ponytail vmc`: the VMC protocol (OSC over UDP, as VSeeFace, XR Animator, VMagicMirror,
 * Warudo and VNyan send it) turned into head poses, with every body bone, for an instance.
 *
 *   vmc_convert.c  Unity's left-handed frame to ours, transforms chained parent to child,
 *                  the head from the tracker or the Hips..Head bone chain, every body
 *                  bone's world pose through Unity's humanoid hierarchy (no I/O)
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

/* The humanoid bones of /VMC/Ext/Bone/Pos, by Unity's HumanBodyBones names: the 54 body
 * bones at their protocol ids (proto/PROTOCOL.md section 5: Hips 0, Spine 1, ...,
 * LeftThumbProximal = left_thumb_metacarpal 24, ..., RightLittleDistal 53), then Head.
 * Each is sent parent-relative; its parent is the one of Unity's humanoid hierarchy
 * (vmc_bone_parent: Hips <- Spine <- Chest <- UpperChest <- Neck <- Head <- eyes, jaw;
 * UpperChest <- shoulders <- arms <- hands <- fingers; Hips <- legs <- feet <- toes).
 * Optional bones (UpperChest, Neck, shoulders, eyes, jaw, toes, fingers) may never come:
 * a bone's transform then chains onto its nearest received ancestor (Root for none). */
enum {
	VMC_HIPS = 0,
	VMC_SPINE = 1,
	VMC_CHEST = 2,
	VMC_UPPER_CHEST = 3,
	VMC_NECK = 4,
	VMC_NBODY = 54,      /* body bones: ids 0..53, as the wire's */
	VMC_HEAD = VMC_NBODY,
	VMC_NBONES
};
extern const char *const vmc_bone_names[VMC_NBONES];
extern const signed char vmc_bone_parent[VMC_NBONES]; /* -1 for Hips */

/* How long a /VMC/Ext/Tra/Pos "Head" keeps precedence over the bone chain after its last
 * arrival, us. */
#define VMC_TRACKER_HOLD_US 1000000

/* What has arrived, in our frame (converted on arrival). */
typedef struct vmc_state {
	int have_root, have_tracker;
	uint64_t have_bone; /* bit per VMC_* bone (1ull << b) */
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
 * now_us, else Root * Hips * Spine * Chest * [UpperChest] * [Neck] * Head (Root is
 * identity until one arrives; a chain bone not received is skipped). 1 with *out set, 0
 * when neither is there (no Head bone yet). */
int vmc_head(const vmc_state *s, int64_t now_us, vmc_xf *out);

/* Every body bone received, in our frame, in world space: Root * its received humanoid
 * ancestors * the bone (as the head's chain, and with the chain's Head: a tracker head
 * does not move the eyes). Writes ids (the protocol's, ascending) and poses (q unit);
 * returns how many, [0, VMC_NBODY]. */
int vmc_body_bones(const vmc_state *s, unsigned char ids[VMC_NBODY], vmc_xf world[VMC_NBODY]);

/* Decodes one UDP payload (a mutable buffer, left as it was) into s, counters included;
 * now_us stamps the tracker. Returns the number of messages used for the pose, or -1
 * when the packet or a bundle element cannot be decoded (counted; the messages before
 * the bad part still count). A pose message with wrong argument types is counted as
 * malformed and skipped, the rest of its bundle is read. */
int vmc_feed(vmc_state *s, void *data, size_t n, int64_t now_us);

#endif
