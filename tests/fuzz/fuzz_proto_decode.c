/* libFuzzer target: the message decoder on arbitrary bytes (`make fuzz`).
 *
 * Besides "never crash, never read outside the input" (ASan), it checks two properties:
 * a message decoded at our own minor re-encodes to exactly the input (the encoding is
 * canonical, so the decoder accepted nothing it could not have produced), and the strand
 * data of every record goes through a strand decoder without harm. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/proto.h"
#include "ptp/strand.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ptp_shape_t twin_tails(void)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 2;
	for (int i = 0; i < 2; i++) {
		s.strands[i].points = 12;
		s.strands[i].segment_length = 0.03f;
		s.strands[i].anchor[0] = i ? 0.05f : -0.05f;
		s.strands[i].direction[1] = -1.0f;
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ptp_decoder_t *dec;
	static uint8_t out[PTP_HEADER_SIZE + PTP_MAX_PAYLOAD];
	ptp_msg_t m;
	size_t need;
	if (!dec) {
		ptp_shape_t s = twin_tails();
		dec = ptp_decoder_create(&s);
	}
	if (ptp_msg_decode(data, size, &m) != PTP_OK)
		return 0;
	if (m.minor <= PTP_MINOR) {
		if (ptp_msg_encode(&m, out, sizeof out, &need) != PTP_OK || need != size ||
		    memcmp(out, data, size) != 0)
			abort();
	}
	if (m.type == PTP_FRAME_BATCH) {
		ptp_record_t r;
		size_t off = 0;
		float pts[3 * 24];
		while (ptp_record_next(&m.u.frame_batch, &off, &r)) {
			if (ptp_decoder_apply(dec, m.u.frame_batch.tick, &r, pts, 24) == PTP_OK)
				for (int i = 0; i < 3 * 24; i++)
					if (pts[i] != pts[i] || pts[i] - pts[i] != 0.0f)
						abort(); /* a decoded point must be finite */
		}
	}
	return 0;
}
