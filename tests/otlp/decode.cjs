// Decodes OTLP/HTTP protobuf request bodies with the OpenTelemetry JavaScript SDK's generated types
// (opentelemetry-proto's ExportMetricsServiceRequest) and prints them as JSON, one document per body.
// Usage: node decode.cjs FILE...   (a FILE ending in .gz is gunzipped first)
"use strict";
const fs = require("fs");
const zlib = require("zlib");
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root");

const Request = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
for (const file of process.argv.slice(2)) {
  let body = fs.readFileSync(file);
  if (file.endsWith(".gz")) {
    body = zlib.gunzipSync(body);
  }
  const msg = Request.decode(body);
  // 64-bit times as decimal strings (exact), enums by name, every field with its default
  const doc = Request.toObject(msg, { longs: String, enums: String, defaults: true });
  process.stdout.write(JSON.stringify(doc) + "\n");
}
