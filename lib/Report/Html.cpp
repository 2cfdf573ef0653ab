//===- Html.cpp - The report page of a run --------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The page is three parts: the static HTML, CSS and script of
// lib/Report/Page.cpp, and the data of this program and run as one JSON
// object in a <script type="application/json"> element. Per-PE figures are
// run-length encoded in the order of the binary's groups (each group's PEs
// row by row), which keeps the machine's 750 x 994 fabric small when whole
// kernels share values.
//
//===----------------------------------------------------------------------===//

#include "weft/Report/Html.h"

#include "weft/Report/Heatmap.h"
#include "weft/Report/Png.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

using namespace weft;
using namespace weft::report;

namespace weft::report {
// lib/Report/Page.cpp.
extern const char *const kPageStart;
extern const char *const kPageScript;
extern const char *const kPageEnd;
} // namespace weft::report

/// printf-style formatting of one figure.
template <typename... Args>
static std::string fmt(const char *format, Args... args) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

static std::string percent(double v) { return fmt("%.2f%%", 100.0 * v); }

/// The summary as (label, value) rows, formatted once here so the page and
/// its tests see the same text.
static std::vector<std::pair<std::string, std::string>>
summaryRows(const ReportInput &in) {
  const binary::Program &p = *in.program;
  const RunSummary &s = in.summary;
  std::vector<std::pair<std::string, std::string>> rows;
  uint64_t gridPEs = uint64_t(p.target.width) * p.target.height;
  uint64_t usedPEs = 0;
  for (const binary::Group &g : p.groups)
    usedPEs += uint64_t(g.width) * g.height;
  rows.push_back({"fabric", p.target.str()});
  rows.push_back(
      {"PEs used", fmt("%" PRIu64 " of %" PRIu64 " (%.1f%%)", usedPEs, gridPEs,
                       100.0 * double(usedPEs) / double(gridPEs))});
  if (!s.precision.empty())
    rows.push_back({"precision", s.precision});
  rows.push_back({"samples", std::to_string(s.samples)});
  rows.push_back({"simulated cycles", std::to_string(s.cycles)});
  rows.push_back(
      {"latency (first sample)", std::to_string(s.latency) + " cycles"});
  std::string perSample =
      s.steadyCycles > 0
          ? fmt("%.1f (median interval between samples)", s.steadyCycles)
          : fmt("%.1f (the latency: fewer than 2 samples)", s.cyclesPerSample);
  if (s.predictedCycles >= 0)
    perSample += ", predicted " + std::to_string(s.predictedCycles);
  rows.push_back({"cycles per sample", perSample});
  rows.push_back({"samples per million cycles",
                  s.cyclesPerSample > 0 ? fmt("%.1f", 1e6 / s.cyclesPerSample)
                                        : std::string("-")});
  if (s.utilization >= 0)
    rows.push_back(
        {"utilization",
         percent(s.utilization) +
             (s.macsPerSample >= 0 ? " (" + std::to_string(s.macsPerSample) +
                                         " MACs of the model per sample over " +
                                         std::to_string(gridPEs) + " PEs)"
                                   : std::string())});
  if (s.executedUtilization >= 0 && s.executedMacsPerSample != s.macsPerSample)
    rows.push_back(
        {"executed MACs", percent(s.executedUtilization) + " of the peak (" +
                              std::to_string(s.executedMacsPerSample) +
                              " per sample)"});
  return rows;
}

static std::string cycles(double v) {
  return v < 0 ? std::string() : fmt("%.1f", v);
}

std::string weft::report::renderReport(const ReportInput &in) {
  const binary::Program &p = *in.program;
  std::string data;
  {
    llvm::raw_string_ostream os(data);
    llvm::json::OStream j(os);
    j.object([&] {
      j.attribute("name", p.name);
      j.attribute("width", int64_t(p.target.width));
      j.attribute("height", int64_t(p.target.height));
      j.attributeArray("summary", [&] {
        for (auto &[label, value] : summaryRows(in))
          j.array([&] {
            j.value(label);
            j.value(value);
          });
      });
      j.attributeArray("layers", [&] {
        for (const std::string &l : p.layers)
          j.value(l);
      });
      j.attributeArray("groups", [&] {
        for (const binary::Group &g : p.groups)
          j.array([&] {
            j.value(g.name);
            j.value(int64_t(g.x));
            j.value(int64_t(g.y));
            j.value(int64_t(g.width));
            j.value(int64_t(g.height));
            j.value(int64_t(g.layer));
            j.value(int64_t(g.image));
          });
      });
      // Each image's colors and routes, for the hover text.
      j.attributeArray("images", [&] {
        for (const binary::CodeImage &image : p.images)
          j.object([&] {
            j.attributeArray("colors", [&] {
              for (uint8_t c : routedColors(image))
                j.value(int64_t(c));
            });
            j.attributeArray("routes", [&] {
              for (const binary::Route &r : image.routes)
                j.value(describeRoute(r));
            });
          });
      });
      j.attributeArray("rects", [&] {
        for (const KernelRect &r : kernelRects(p))
          j.array([&] {
            j.value(int64_t(r.layer));
            j.value(int64_t(r.x));
            j.value(int64_t(r.y));
            j.value(int64_t(r.width));
            j.value(int64_t(r.height));
          });
      });
      // The colors of include/weft/Report/Png.h, so that the page and the
      // PNG images draw alike.
      auto hex = [](Rgb c) { return fmt("#%02x%02x%02x", c.r, c.g, c.b); };
      j.attributeArray("colormap", [&] {
        for (const Rgb &c : colorMapAnchors())
          j.value(hex(c));
      });
      j.attribute("zero", hex(kZeroColor));
      j.attribute("unused", hex(kUnusedColor));
      // Every kind the data allows, its values run-length encoded in group
      // order: [value, count, value, count, ...].
      j.attributeArray("kinds", [&] {
        for (const HeatmapKind &kind : heatmapKinds()) {
          if (kind.needsRun && !in.pes)
            continue;
          Grid grid = computeHeatmap(kind, p, in.pes);
          j.object([&] {
            j.attribute("name", kind.name);
            j.attribute("description", kind.description);
            j.attribute("categorical", kind.categorical);
            j.attributeArray("runs", [&] {
              int64_t value = 0, count = 0;
              auto flush = [&] {
                if (count) {
                  j.value(value);
                  j.value(count);
                }
              };
              for (const binary::Group &g : p.groups)
                for (uint32_t y = g.y; y < g.y + g.height; ++y)
                  for (uint32_t x = g.x; x < g.x + g.width; ++x) {
                    int64_t v = x < grid.width && y < grid.height
                                    ? grid.at(x, y)
                                    : kind.unused;
                    if (count && v == value) {
                      ++count;
                      continue;
                    }
                    flush();
                    value = v;
                    count = 1;
                  }
              flush();
            });
          });
        }
      });
      j.attributeArray("table", [&] {
        for (const KernelRow &k : in.kernels)
          j.array([&] {
            j.value(k.name);
            j.value(k.what);
            j.value(k.pes);
            j.value(cycles(k.predicted));
            j.value(cycles(k.simulated));
            j.value(k.predicted >= 0 && k.simulated > 0
                        ? fmt("%.1f%%",
                              100.0 * std::abs(k.predicted - k.simulated) /
                                  k.simulated)
                        : std::string());
            j.value(cycles(k.ceBusy));
          });
      });
      j.attribute("trace", in.traceLink);
    });
  }
  // The JSON sits in a <script> element: no "<" may open a tag in it. A "<"
  // only occurs inside JSON strings, where \u003c means the same.
  std::string escaped;
  escaped.reserve(data.size());
  for (char c : data)
    escaped += c == '<' ? std::string("\\u003c") : std::string(1, c);
  std::string title = p.name.empty() ? std::string("program") : p.name;
  std::string safeTitle;
  for (char c : title)
    safeTitle += c == '<' ? "&lt;" : c == '&' ? "&amp;" : std::string(1, c);
  std::string page = kPageStart;
  for (size_t at; (at = page.find("@TITLE@")) != std::string::npos;)
    page.replace(at, 7, safeTitle);
  page += "<script type=\"application/json\" id=\"data\">";
  page += escaped;
  page += "</script>\n<script>\n";
  page += kPageScript;
  page += "</script>\n";
  page += kPageEnd;
  return page;
}

std::string weft::report::linkFrom(const std::string &page,
                                   const std::string &target) {
  llvm::SmallString<256> from(page), to(target);
  (void)llvm::sys::fs::make_absolute(from);
  (void)llvm::sys::fs::make_absolute(to);
  llvm::sys::path::remove_dots(from, true);
  llvm::sys::path::remove_dots(to, true);
  llvm::sys::path::remove_filename(from);
  std::vector<llvm::StringRef> a(llvm::sys::path::begin(from),
                                 llvm::sys::path::end(from));
  std::vector<llvm::StringRef> b(llvm::sys::path::begin(to),
                                 llvm::sys::path::end(to));
  size_t common = 0;
  while (common < a.size() && common + 1 < b.size() && a[common] == b[common])
    ++common;
  std::string rel;
  for (size_t i = common; i < a.size(); ++i)
    rel += "../";
  for (size_t i = common; i < b.size(); ++i)
    rel += b[i].str() + (i + 1 < b.size() ? "/" : "");
  std::string link;
  for (unsigned char c : rel) {
    if (llvm::isAlnum(c) || c == '.' || c == '_' || c == '-' || c == '~' ||
        c == '/')
      link += char(c);
    else
      link += fmt("%%%02X", c);
  }
  return link;
}
