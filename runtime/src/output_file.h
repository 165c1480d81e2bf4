// output_file.h — the failure message of an output file the runtime writes (trace, task graph):
// the path and the OS's reason, as the caller (c_api, pypto's RunError) passes them on.
#pragma once

#include <cstring>
#include <string>

namespace pto2::detail {

// "could not write the trace to /tmp/x/t.json: No such file or directory". `err` is the errno of
// the failed open / write / close (0: the stream failed without one).
inline std::string output_file_error(const char* what, const std::string& path, int err) {
  return std::string("could not write ") + what + " to " + path + ": " +
         (err != 0 ? std::strerror(err) : "the write failed");
}

// Stores the message in `*error` (when given) and returns false: `return output_failed(error, ...);`
inline bool output_failed(std::string* error, const char* what, const std::string& path, int err) {
  if (error) *error = output_file_error(what, path, err);
  return false;
}

}  // namespace pto2::detail
