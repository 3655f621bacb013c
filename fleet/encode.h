/*
 * Request bodies from spooled samples: the records of a batch are read
 * back (sample_record.h) into the series table, then written as a
 * Prometheus remote-write WriteRequest (rw_encode.c) or an OTLP
 * ExportMetricsServiceRequest (otlp_encode.c), both protobuf (pb.h),
 * uncompressed. Pure: no I/O but the host's architecture read once.
 */
#ifndef TEGRAWATCH_FLEET_ENCODE_H
#define TEGRAWATCH_FLEET_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "fleet.h"
#include "sample_record.h"
#include "series.h"

struct fleet_encoder;

struct fleet_encoder_ops {
	/* Optional: series of the sample R that no metric gives (info series), added to E->series. */
	void (*add_record)(struct fleet_encoder *e, const struct sample_record_reader *r);
	/* Appends the request body for the points in E->series to OUT. */
	void (*write)(struct fleet_encoder *e, struct buf *out);
	void (*destroy)(struct fleet_encoder *e);
};

struct fleet_encoder {
	const struct fleet_encoder_ops *ops;
	struct series_table series;
};

/**
 * The body of a request for the N records PAYLOADS[i] (LENS[i] bytes),
 * oldest first, written to OUT (emptied first). Returns the number of
 * records that could not be read (damaged: left out).
 */
size_t fleet_encode(struct fleet_encoder *e, const void *const *payloads, const size_t *lens, size_t n,
		    struct buf *out);

/** Remote write 1.0: labels __name__, the metric's, job, instance, board and CFG's labels. */
struct fleet_encoder *rw_encoder_create(const struct fleet_config *cfg, const struct fleet_info *info);

/** OTLP metrics: the board as the resource; sums start at START_MS (the agent's start). */
struct fleet_encoder *otlp_encoder_create(const struct fleet_config *cfg, const struct fleet_info *info,
					  int64_t start_ms);

/**
 * The OTLP name and UCUM unit of a Prometheus family: the family without
 * its unit suffix (and _total for counters), tegrawatch_temperature_celsius
 * -> tegrawatch_temperature, "Cel". A collector that exports to
 * Prometheus adds them back. NAME has room for FLEET_FAMILY_MAX bytes.
 */
void otlp_name_unit(const char *family, bool counter, char *name, const char **unit);

static inline void
fleet_encoder_destroy(struct fleet_encoder *e)
{
	if (e) {
		e->ops->destroy(e);
	}
}

#endif
