/* Records of a batch into the series table, then the encoder writes them (see encode.h). */
#include "encode.h"

size_t
fleet_encode(struct fleet_encoder *e, const void *const *payloads, const size_t *lens, size_t n, struct buf *out)
{
	size_t damaged = 0;
	series_table_batch_reset(&e->series);
	for (size_t i = 0; i < n; i++) {
		struct sample_record_reader r;
		const char *name;
		double value;
		int got = sample_record_open(&r, payloads[i], lens[i]);
		while (got == 0 && (got = sample_record_next(&r, &name, &value)) == 1) {
			series_table_add_metric(&e->series, name, r.time_ms, value);
			got = 0;
		}
		if (got < 0) {
			damaged++; /* what was read of it stays: each point is whole */
			continue;
		}
		if (e->ops->add_record) {
			e->ops->add_record(e, &r);
		}
	}
	buf_reset(out);
	e->ops->write(e, out);
	return damaged;
}
