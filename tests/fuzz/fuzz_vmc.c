/* libFuzzer target: the VMC (OSC over UDP) parser of `ponytail vmc`
 * (clients/cli/vmc_parse.c, with liblo decoding each message) on arbitrary datagrams.
 *
 * Each input is split into datagrams at every "\n--\n" and fed to one state in turn, as a
 * tracker's stream would arrive. Beyond "never crash, never read outside the datagram" it
 * checks: the datagram buffer is left as it was (vmc_feed promises it), and whenever a head
 * can be computed it is finite with a unit quaternion (non-finite numbers are dropped). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void feed(vmc_state *s, const uint8_t *d, size_t n, int64_t now)
{
	uint8_t *buf = malloc(n ? n : 1), *copy = malloc(n ? n : 1);
	memcpy(buf, d, n);
	memcpy(copy, d, n);
	vmc_feed(s, buf, n, now);
	if (memcmp(buf, copy, n) != 0)
		abort(); /* the datagram must be left as it was (--forward sends it on) */
	free(buf);
	free(copy);
	vmc_xf h;
	if (vmc_head(s, now, &h)) {
		double q2 = 0;
		for (int i = 0; i < 4; i++)
			q2 += h.q[i] * h.q[i];
		for (int i = 0; i < 3; i++)
			if (!isfinite(h.p[i]))
				abort();
		if (!(fabs(q2 - 1.0) < 1e-3))
			abort(); /* a head must be finite with a unit rotation */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	vmc_state s;
	memset(&s, 0, sizeof s);
	size_t start = 0;
	int64_t now = 1000000;
	for (size_t i = 0; i + 4 <= size; i++)
		if (i >= start && memcmp(data + i, "\n--\n", 4) == 0) {
			feed(&s, data + start, i - start, now += 16000);
			start = i + 4;
		}
	feed(&s, data + start, size - start, now + 16000);
	return 0;
}
