//===- Page.cpp - The report page's HTML, CSS and script ------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The fixed parts of the page lib/Report/Html.cpp writes. The first script of
// the page records every script error and unhandled promise rejection as an
// <li class="err"> in the list #errors, so that a test that loads the page
// in a browser sees them in the DOM. The main script reads the JSON in
// #data, fills the tables, paints the chosen heatmap on a canvas (one
// ImageData pixel per PE, scaled up without smoothing: the machine's
// 745,500 PEs are one putImageData), outlines and labels the kernels, and
// finally writes what it drew into #status.
//
//===----------------------------------------------------------------------===//

namespace weft::report {

extern const char *const kPageStart;
extern const char *const kPageScript;
extern const char *const kPageEnd;

const char *const kPageStart = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<script>
(function () {
  function record(text) {
    var list = document.getElementById('errors');
    if (!list) {
      list = document.createElement('ul');
      list.id = 'errors';
      (document.body || document.documentElement).appendChild(list);
    }
    var item = document.createElement('li');
    item.className = 'err';
    item.textContent = text;
    list.appendChild(item);
  }
  window.onerror = function (message, source, line, column) {
    record('script error: ' + message + ' (line ' + line + ', column ' + column + ')');
  };
  window.addEventListener('unhandledrejection', function (event) {
    record('unhandled rejection: ' + event.reason);
  });
})();
</script>
<title>weft report: @TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 0.5em; }
h2 { font-size: 1.1em; margin: 1.2em 0 0.4em; }
table { border-collapse: collapse; }
td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
#layers td.num, #layers th.num { text-align: right; }
#layers tbody tr:nth-child(odd) { background: #f4f4f4; }
#map { position: relative; display: inline-block; border: 1px solid #444; line-height: 0; }
#heatmap { image-rendering: pixelated; cursor: crosshair; }
#hover { position: absolute; z-index: 2; pointer-events: none; background: #fffffff0;
  border: 1px solid #888; padding: 4px 6px; font: 12px/1.35 ui-monospace, monospace;
  white-space: pre; line-height: 1.35; }
#legend { margin: 0.4em 0; }
#legend canvas { vertical-align: middle; border: 1px solid #888; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #888;
  vertical-align: middle; margin-left: 1em; }
#errors:empty { display: none; }
#errors { color: #a00; }
#status { color: #666; font-size: 12px; }
</style>
</head>
<body>
<h1>weft report: @TITLE@</h1>
<ul id="errors"></ul>
<section>
<h2>The run</h2>
<table id="summary"></table>
</section>
<section>
<h2>The fabric</h2>
<label>Heatmap <select id="kind"></select></label>
<label>of <select id="view"><option value="fabric">the whole fabric</option>
<option value="used">the PEs in use</option></select></label>
<span id="kind-description"></span>
<div id="legend"><span id="legend-lo"></span> <canvas id="legend-bar" width="256" height="12"></canvas> <span id="legend-hi"></span>
<span class="swatch" id="zero-swatch"></span> zero
<span class="swatch" id="unused-swatch"></span> no group</div>
<div id="map"><canvas id="heatmap"></canvas><div id="hover" hidden></div></div>
</section>
<section>
<h2>Layers: cycles per sample</h2>
<table id="layers"><thead><tr><th>layer</th><th>what</th><th class="num">PEs</th>
<th class="num">predicted</th><th class="num">simulated</th><th class="num">error</th>
<th class="num">CE-busy</th></tr></thead><tbody></tbody></table>
</section>
<section>
<h2>Trace</h2>
<p id="trace"></p>
</section>
<p id="status" data-state="loading">The page's script has not run.</p>
)page";

const char *const kPageScript = R"page((function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var W = data.width, H = data.height;

  // The run's figures.
  var summary = document.getElementById('summary');
  data.summary.forEach(function (row) {
    var tr = summary.insertRow();
    tr.insertCell().textContent = row[0];
    tr.insertCell().textContent = row[1];
  });

  // Each PE's group, and each group's first index in group order (the order
  // of the per-PE values).
  var drawable = W * H <= (1 << 22);
  var peGroup = drawable ? new Int32Array(W * H).fill(-1) : null;
  var starts = [];
  var usedPEs = 0;
  data.groups.forEach(function (g, i) {
    starts.push(usedPEs);
    usedPEs += g[3] * g[4];
    if (!peGroup) return;
    for (var y = g[2]; y < g[2] + g[4] && y < H; ++y)
      for (var x = g[1]; x < g[1] + g[3] && x < W; ++x) peGroup[y * W + x] = i;
  });

  // The kinds: run ends for lookups and the range the color map spans.
  var kinds = data.kinds.map(function (k) {
    var n = k.runs.length / 2, ends = new Float64Array(n), vals = new Float64Array(n);
    var total = 0, lo = Infinity, hi = -Infinity;
    for (var r = 0; r < n; ++r) {
      var v = k.runs[2 * r];
      total += k.runs[2 * r + 1];
      ends[r] = total;
      vals[r] = v;
      if (k.categorical ? v >= 0 : v !== 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (k.categorical) lo = 0;
    return { name: k.name, description: k.description, categorical: k.categorical,
             ends: ends, vals: vals, lo: lo, hi: hi };
  });
  function valueAt(kind, index) {
    var a = 0, b = kind.ends.length - 1;
    while (a < b) {
      var m = (a + b) >> 1;
      if (kind.ends[m] > index) b = m; else a = m + 1;
    }
    return kind.vals[a];
  }

  // The color map: 256 entries interpolated between the anchors.
  function rgb(h) {
    return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)];
  }
  var anchors = data.colormap.map(rgb);
  var lut = new Uint8Array(256 * 3);
  for (var i = 0; i < 256; ++i) {
    var pos = i / 255 * (anchors.length - 1), j = Math.min(Math.floor(pos), anchors.length - 2), f = pos - j;
    for (var c = 0; c < 3; ++c)
      lut[3 * i + c] = Math.round(anchors[j][c] + f * (anchors[j + 1][c] - anchors[j][c]));
  }
  var ZERO = rgb(data.zero), UNUSED = rgb(data.unused);
  document.getElementById('zero-swatch').style.background = data.zero;
  document.getElementById('unused-swatch').style.background = data.unused;
  function colorIndex(kind, v) {
    if (kind.categorical ? v < 0 : v === 0) return -1;
    var t = kind.hi > kind.lo ? (v - kind.lo) / (kind.hi - kind.lo) : 1;
    return Math.max(0, Math.min(255, Math.round(t * 255)));
  }

  // The view: the whole fabric, or the rectangle around the PEs in use (a
  // small network on the machine's 750 x 994 is a strip at its edge). The
  // canvas shows it with every PE a square of `scale` pixels.
  var canvas = document.getElementById('heatmap');
  var ctx = canvas.getContext('2d');
  var x0 = W, y0 = H, x1 = 0, y1 = 0;
  data.groups.forEach(function (g) {
    x0 = Math.min(x0, g[1]);
    y0 = Math.min(y0, g[2]);
    x1 = Math.max(x1, Math.min(W, g[1] + g[3]));
    y1 = Math.max(y1, Math.min(H, g[2] + g[4]));
  });
  var used = x1 > x0 && y1 > y0 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }
                                : { x: 0, y: 0, w: W, h: H };
  var view = { x: 0, y: 0, w: W, h: H }, scale = 1;
  function setView(which) {
    view = which === 'used' ? used : { x: 0, y: 0, w: W, h: H };
    scale = Math.max(1, Math.min(40, Math.floor(960 / view.w), Math.floor(960 / view.h)));
    canvas.width = view.w * scale;
    canvas.height = view.h * scale;
  }
  var off = document.createElement('canvas');
  off.width = W;
  off.height = H;
  var offCtx = off.getContext('2d');

  function drawRects() {
    var drawn = 0;
    ctx.lineWidth = scale >= 4 ? 2 : 1;
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    data.rects.forEach(function (r) {
      if (r[1] >= view.x + view.w || r[2] >= view.y + view.h ||
          r[1] + r[3] <= view.x || r[2] + r[4] <= view.y) return;
      var x = (r[1] - view.x) * scale, y = (r[2] - view.y) * scale;
      var w = r[3] * scale, h = r[4] * scale;
      ctx.strokeStyle = '#000';
      ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
      var name = data.layers[r[0]] || ('layer ' + r[0]);
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, w, h);
      ctx.clip();
      ctx.lineWidth = 3;
      ctx.strokeStyle = '#fff';
      ctx.strokeText(name, x + 3, y + 3);
      ctx.fillStyle = '#000';
      ctx.fillText(name, x + 3, y + 3);
      ctx.restore();
      ++drawn;
    });
    return drawn;
  }

  function drawLegend(kind) {
    var bar = document.getElementById('legend-bar').getContext('2d');
    for (var i = 0; i < 256; ++i) {
      bar.fillStyle = 'rgb(' + lut[3 * i] + ',' + lut[3 * i + 1] + ',' + lut[3 * i + 2] + ')';
      bar.fillRect(i, 0, 1, 12);
    }
    var none = !(kind.hi >= kind.lo);
    document.getElementById('legend-lo').textContent = none ? '-' : String(kind.lo);
    document.getElementById('legend-hi').textContent = none ? '-' : String(kind.hi);
    document.getElementById('kind-description').textContent = kind.description;
  }

  // Paints `kind`; returns the PEs painted with a value.
  function paint(kind) {
    var image = offCtx.createImageData(W, H), px = image.data;
    for (var o = 0; o < px.length; o += 4) {
      px[o] = UNUSED[0]; px[o + 1] = UNUSED[1]; px[o + 2] = UNUSED[2]; px[o + 3] = 255;
    }
    var painted = 0, r = 0;
    data.groups.forEach(function (g, gi) {
      var index = starts[gi];
      for (var y = g[2]; y < g[2] + g[4]; ++y)
        for (var x = g[1]; x < g[1] + g[3]; ++x, ++index) {
          while (r + 1 < kind.ends.length && kind.ends[r] <= index) ++r;
          if (x >= W || y >= H) continue;
          var ci = colorIndex(kind, kind.vals[r]), o = 4 * (y * W + x);
          if (ci < 0) { px[o] = ZERO[0]; px[o + 1] = ZERO[1]; px[o + 2] = ZERO[2]; }
          else { px[o] = lut[3 * ci]; px[o + 1] = lut[3 * ci + 1]; px[o + 2] = lut[3 * ci + 2]; }
          ++painted;
        }
    });
    offCtx.putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(off, view.x, view.y, view.w, view.h, 0, 0, view.w * scale, view.h * scale);
    drawLegend(kind);
    return painted;
  }

  // The list of kinds; "busy" first shown when the run has it.
  var select = document.getElementById('kind');
  kinds.forEach(function (k, i) {
    var option = document.createElement('option');
    option.value = String(i);
    option.textContent = k.name;
    select.appendChild(option);
  });
  // The address may choose the kind, the view and a PE to describe, as the
  // hover does: report.html#kind=hops_east&view=used&pe=3,1 (what a test in
  // a headless browser, which has no mouse, checks).
  var params = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var at = kv.indexOf('=');
    if (at > 0) params[kv.substr(0, at)] = decodeURIComponent(kv.substr(at + 1));
  });
  var wanted = params.kind || 'busy';
  var initial = Math.max(0, kinds.findIndex(function (k) { return k.name === wanted; }));
  select.value = String(initial);
  var viewSelect = document.getElementById('view');
  viewSelect.value = params.view === 'used' ? 'used' : 'fabric';
  setView(viewSelect.value);
  var painted = 0, rects = 0;
  function show() {
    if (!drawable || !kinds.length) return;
    painted = paint(kinds[Number(select.value)]);
    rects = drawRects();
  }
  select.addEventListener('change', show);
  viewSelect.addEventListener('change', function () {
    setView(viewSelect.value);
    show();
  });
  show();

  // A PE's figures, kernel, group and routes on hover.
  var hover = document.getElementById('hover');
  function describe(x, y) {
    var lines = ['PE (' + x + ', ' + y + ')'];
    var gi = peGroup[y * W + x];
    if (gi < 0) {
      lines.push('no group: idle');
    } else {
      var g = data.groups[gi], index = starts[gi] + (y - g[2]) * g[3] + (x - g[1]);
      lines.push('kernel ' + (g[5] >= 0 ? data.layers[g[5]] : '(none)') + ', group ' + g[0]);
      kinds.forEach(function (k) { lines.push(k.name + ': ' + valueAt(k, index)); });
      var image = data.images[g[6]] || { colors: [], routes: [] }, routes = image.routes;
      lines.push('router colors: ' + (image.colors.length ? image.colors.join(', ') : 'none'));
      lines.push('routes (color: in -> out):');
      routes.forEach(function (route) { lines.push('  ' + route); });
      if (!routes.length) lines.push('  none');
    }
    return lines.join('\n');
  }
  // Shows PE (x, y)'s description at (left, top) in the canvas's box.
  function hoverAt(x, y, left, top, width) {
    if (!peGroup || x < 0 || y < 0 || x >= W || y >= H) { hover.hidden = true; return; }
    hover.textContent = describe(x, y);
    hover.hidden = false;
    if (left + hover.offsetWidth > width) left = Math.max(0, left - hover.offsetWidth - 28);
    hover.style.left = left + 'px';
    hover.style.top = top + 'px';
  }
  canvas.addEventListener('mousemove', function (event) {
    var box = canvas.getBoundingClientRect();
    var x = view.x + Math.floor((event.clientX - box.left) * canvas.width / box.width / scale);
    var y = view.y + Math.floor((event.clientY - box.top) * canvas.height / box.height / scale);
    hoverAt(x, y, event.clientX - box.left + 14, event.clientY - box.top + 14, box.width);
  });
  canvas.addEventListener('mouseleave', function () { hover.hidden = true; });
  var pe = /^(\d+),(\d+)$/.exec(params.pe || '');
  if (pe) {
    var px = Number(pe[1]), py = Number(pe[2]);
    hoverAt(px, py, (px - view.x + 1) * scale + 4, (py - view.y + 1) * scale + 4, canvas.width);
  }

  // The layers' table.
  var body = document.querySelector('#layers tbody');
  data.table.forEach(function (row) {
    var tr = body.insertRow();
    row.forEach(function (cell, i) {
      var td = tr.insertCell();
      td.textContent = String(cell);
      if (i >= 2) td.className = 'num';
    });
  });

  // The trace.
  var trace = document.getElementById('trace');
  if (data.trace) {
    var a = document.createElement('a');
    a.href = data.trace;
    a.id = 'trace-link';
    a.textContent = decodeURIComponent(data.trace);
    trace.appendChild(a);
    trace.appendChild(document.createTextNode(
      ': the run as Chrome trace events (open it in chrome://tracing or Perfetto)'));
  } else {
    trace.textContent = 'No trace was recorded (weftc run --trace FILE records one).';
  }

  var status = document.getElementById('status');
  status.dataset.state = drawable ? 'drawn' : 'too-large';
  status.textContent = (drawable ? 'drawn: ' : 'not drawn (over 4194304 PEs): ') + rects +
    ' kernel rectangles, ' + painted + ' heatmap cells of ' + (W * H) + ' PEs, ' +
    data.table.length + ' layer rows, ' + kinds.length + ' kinds, showing ' +
    (kinds.length ? kinds[Number(select.value)].name : 'none') + ' on ' + view.w + 'x' +
    view.h + ' PEs at (' + view.x + ', ' + view.y + ')';
})();
)page";

const char *const kPageEnd = R"page(</body>
</html>
)page";

} // namespace weft::report
