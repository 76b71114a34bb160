// The slurmrestd decoders (slurm/rest_codec.hpp), read-only use of their public functions; the
// first byte picks the API version and the decoder.
#include "fuzz_common.hpp"
#include "jobgen/slurm/rest_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen::slurm;
  if (size == 0) return 0;
  const auto dialects = rest_dialects();
  const RestDialect& dialect = dialects[(data[0] >> 3) % dialects.size()];
  const std::string_view body = jobgen::fuzz::text(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      (void)decode_jobs(dialect, body);
      break;
    case 1:
      (void)decode_nodes(dialect, body);
      break;
    case 2:
      (void)decode_partitions(dialect, body);
      break;
    case 3:
      (void)decode_submit(body);
      break;
    case 4:
      (void)format_rest_errors(decode_messages(body).errors);
      break;
    default:
      (void)parse_node_gpus(body, body.substr(body.size() / 2));
  }
  return 0;
}
