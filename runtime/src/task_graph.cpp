// task_graph.cpp — the recorded task graph of a run as Graphviz DOT (RaceChecker::dot).
//
// The race checker records the run's logical dependency graph (race_checker.h); this prints
// it. Nodes: one per task, labelled with its kernel, core type, task number and the DSL line
// of its submission; barriers (dummy tasks) are diamonds, tasks skipped by their predicate are
// dashed, get_tensor_data waits are small ellipses. Edges: automatic (solid), explicit deps=
// (bold, blue), orders through a get_tensor_data wait (dotted). An edge that is both explicit
// and automatic is drawn as explicit.
#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include "engine.h"
#include "output_file.h"
#include "race_checker.h"
#include "text_escape.h"

namespace pto2::detail {

namespace {

std::string kernel_name(const std::vector<KernelInfo>& kernels, int32_t k) {
  if (k >= 0 && static_cast<size_t>(k) < kernels.size() && !kernels[static_cast<size_t>(k)].name.empty())
    return kernels[static_cast<size_t>(k)].name;
  return "kernel " + std::to_string(k);
}

}  // namespace

std::string RaceChecker::dot(const std::vector<KernelInfo>& kernels) const {
  std::ostringstream os;
  os << "digraph pypto_tasks {\n"
        "  rankdir=TB;\n"
        "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  auto id = [&](uint32_t n) { return nodes_[n].raw ? "t" + std::to_string(number(nodes_[n].raw)) : "w" + std::to_string(n); };
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const Node& d = nodes_[n];
    std::string label, attrs;
    if (!d.raw) {
      label = "get_tensor_data";
      attrs = "shape=ellipse, fontsize=8";
    } else if (d.kind == static_cast<int>(TaskKind::DUMMY)) {
      label = "barrier #" + std::to_string(number(d.raw));
      attrs = "shape=diamond, style=solid";
    } else {
      const char* core = d.kind == static_cast<int>(TaskKind::AIC) ? "AIC"
                         : d.kind == static_cast<int>(TaskKind::AIV) ? "AIV" : "MIXED";
      if (d.kernel[0] >= 0 && d.kernel[1] >= 0)
        label = kernel_name(kernels, d.kernel[0]) + " + " + kernel_name(kernels, d.kernel[1]);
      else
        label = kernel_name(kernels, d.kernel[0] >= 0 ? d.kernel[0] : d.kernel[1]);
      label += "\n" + std::string(core) + "  #" + std::to_string(number(d.raw));
      if (d.skipped) {
        label += "\n(skipped: predicate false)";
        attrs = "style=\"rounded,dashed\"";
      }
    }
    const std::string where = site(n);
    if (!where.empty()) label += "\n" + where;
    os << "  " << id(n) << " [label=\"" << dot_escape(label) << "\"";
    os << ", kind=\"" << (!d.raw ? "wait" : d.kind == static_cast<int>(TaskKind::DUMMY) ? "barrier" : "task") << "\"";
    if (d.raw) os << ", task=" << number(d.raw);
    if (!where.empty()) os << ", source=\"" << dot_escape(where) << "\"";
    if (!attrs.empty()) os << ", " << attrs;
    os << "];\n";
  }
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    std::map<uint32_t, uint8_t> in;  // predecessor -> strongest kind (explicit over auto over wait)
    for (uint32_t i = nodes_[n].pred_begin; i < nodes_[n].pred_end; ++i) {
      const uint8_t k = i < pred_kind_.size() ? pred_kind_[i] : static_cast<uint8_t>(kAutoEdge);
      auto rank = [](uint8_t kind) { return kind == kExplicitEdge ? 2 : kind == kAutoEdge ? 1 : 0; };
      auto it = in.find(preds_[i]);
      if (it == in.end() || rank(k) > rank(it->second)) in[preds_[i]] = k;
    }
    for (const auto& [p, k] : in) {
      os << "  " << id(p) << " -> " << id(n);
      if (k == kExplicitEdge) os << " [kind=\"explicit\", style=bold, color=\"#1f5fbf\"]";
      else if (k == kSyncEdge) os << " [kind=\"wait\", style=dotted]";
      else os << " [kind=\"auto\"]";
      os << ";\n";
    }
  }
  os << "}\n";
  return os.str();
}

bool Engine::write_graph(const std::string& path, std::string* error) const {
  std::unique_lock<std::mutex> lk;
  try {
    lk = between_runs("write_graph");  // the run in progress writes what it would read
  } catch (const std::logic_error& e) {
    if (error) *error = e.what();
    return false;
  }
  if (!race_) {  // nothing recorded: the last run had the race checker off
    if (error) *error = "no task graph to write to " + path + ": the last run did not record one (run with the race "
                        "checker on: RaceCheck::Warn or Error)";
    return false;
  }
  const std::string dot = race_->dot(kernels_.infos());
  errno = 0;
  std::ofstream f(path);
  if (!f) return output_failed(error, "the task graph", path, errno);
  f << dot;
  f.close();   // the flush of a small graph happens here: a full disk fails here, not above
  return f.fail() ? output_failed(error, "the task graph", path, errno) : true;
}

}  // namespace pto2::detail
