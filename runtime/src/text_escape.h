// text_escape.h — user text (kernel names, source sites) written into the files libpto2 writes:
// JSON traces (trace.cpp) and Graphviz graphs (task_graph.cpp) must stay valid UTF-8 text whatever
// bytes a name holds (a C++ caller may register any std::string), and the trace reader
// (trace_reader.cpp) accepts exactly the well-formed UTF-8 these produce.
#pragma once

#include <cstdio>
#include <string>

namespace pto2::detail {

// A well-formed UTF-8 sequence starting at p (a byte >= 0x80), as Python's strict decoder takes
// it: no overlong form, no surrogate, nothing above U+10FFFF. Returns its length, 0 if invalid.
inline int utf8_length(const unsigned char* p, const unsigned char* end) {
  const unsigned c = p[0];
  int n;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (end - p < n || p[1] < lo || p[1] > hi) return 0;
  for (int i = 2; i < n; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return n;
}

// `s` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD (written as UTF-8),
// each other character passed to `put(const char* p, int n, bool ascii)`.
template <class Put>
void for_each_utf8(const std::string& s, Put&& put) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (*p < 0x80) {
      put(reinterpret_cast<const char*>(p), 1, true);
      ++p;
      continue;
    }
    const int n = utf8_length(p, end);
    if (n == 0) {
      put("\xEF\xBF\xBD", 3, false);
      ++p;
    } else {
      put(reinterpret_cast<const char*>(p), n, false);
      p += n;
    }
  }
}

// The body of a JSON string: '"' and '\\' escaped, control characters as \u00XX, bytes that are
// not UTF-8 as U+FFFD.
inline std::string json_escape(const std::string& s) {
  std::string o;
  for_each_utf8(s, [&](const char* p, int n, bool ascii) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (ascii && (c == '"' || c == '\\')) {
      o += '\\';
      o += *p;
    } else if (ascii && c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o.append(p, static_cast<size_t>(n));
    }
  });
  return o;
}

// The body of a Graphviz (DOT) string: '"' and '\\' escaped, a newline as \n, other control
// characters as a space, bytes that are not UTF-8 as U+FFFD.
inline std::string dot_escape(const std::string& s) {
  std::string o;
  for_each_utf8(s, [&](const char* p, int n, bool ascii) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (ascii && (c == '"' || c == '\\')) {
      o += '\\';
      o += *p;
    } else if (ascii && c == '\n') {
      o += "\\n";
    } else if (ascii && (c < 0x20 || c == 0x7f)) {
      o += ' ';
    } else {
      o.append(p, static_cast<size_t>(n));
    }
  });
  return o;
}

}  // namespace pto2::detail
