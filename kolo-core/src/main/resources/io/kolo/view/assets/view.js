/*
 * Kolo's job view: renders the job's JSON (the schema of /api/job, docs/jobs.md) into the page. Live, it asks
 * api/job once a second and updates the page in place, asking only for the metric points newer than those it has
 * (api/job?since=CURSOR); in a report file, it renders the JSON embedded in <script id="kolo-job"> once and asks
 * nothing. Every value from the job goes in as text, never as HTML.
 */
(function () {
  'use strict';

  var POLL_MILLIS = 1000;
  var MAX_EVENTS = 300;
  var COLORS = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bc4c00', '#1b7c83', '#bf3989', '#4d2d00',
                '#57606a', '#6639ba', '#0550ae', '#a40e26'];
  var ENGINE_SERIES = {
    kolo_ops_per_second: 'Throughput: collective ops per second',
    kolo_bytes_per_second: 'Throughput: bytes per second',
    kolo_collective_share: 'Time in collectives (share of wall time)'
  };

  var MAX_POINTS = 2000;    // per name and rank, as the view keeps them
  var charts = {};          // metric name -> {figure, plot, ranks (joined), xKind}
  var lastJob = null;
  var points = {};          // "name rank" -> the metric points the page has, oldest first
  var cursor = null;        // the metricsCursor of the last answer: the next poll asks for the points after it

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function isNumber(v) { return typeof v === 'number' && isFinite(v); }

  function fixed(v, digits) { return isNumber(v) ? v.toFixed(digits) : '–'; }

  function duration(seconds) {
    if (!isNumber(seconds)) { return '–'; }
    var s = Math.max(0, Math.round(seconds));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    var mm = (h > 0 && m < 10 ? '0' : '') + m, ss = (r < 10 ? '0' : '') + r;
    return h > 0 ? h + ':' + mm + ':' + ss : mm + ':' + ss;
  }

  function bytes(n) {
    if (!isNumber(n)) { return '–'; }
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }

  function stateBadge(node, state) {
    node.textContent = state || '…';
    node.className = 'state state-' + (state || 'UNKNOWN');
  }

  // --- header -------------------------------------------------------------------------------------------------

  function renderHeader(job) {
    stateBadge($('job-state'), job.state);
    document.title = 'Kolo job: ' + (job.state || '…') + (isNumber(job.size) ? ', ' + job.size + ' ranks' : '');
    $('job-size').textContent = isNumber(job.size) ? job.size : '–';
    $('job-hosts').textContent = (job.hosts || []).join(', ') || '–';
    $('job-elapsed').textContent = duration(job.elapsedSeconds);
    $('job-generation').textContent = (isNumber(job.generation) ? job.generation : '–') +
        (job.elastic ? ' (elastic)' : ' (static)');
    $('job-command').textContent = job.command || '';
    $('job-command').title = job.command || '';
    var hasProgress = isNumber(job.progressPercentage);
    $('job-progress-item').hidden = !hasProgress;
    if (hasProgress) {
      var dd = $('job-progress');
      dd.textContent = '';
      var bar = el('progress', {max: '100', value: String(job.progressPercentage)});
      bar.setAttribute('aria-label', 'progress');
      dd.appendChild(bar);
      dd.appendChild(document.createTextNode(job.progressPercentage.toFixed(1) + ' %'));
    }
    var hasEta = isNumber(job.estimatedRemainingSeconds);
    $('job-eta-item').hidden = !hasEta;
    if (hasEta) { $('job-eta').textContent = duration(job.estimatedRemainingSeconds); }
  }

  // --- ranks ----------------------------------------------------------------------------------------------

  var RANK_CELLS = ['rank', 'state', 'host', 'pid', 'ops', 'collectiveSeconds', 'betweenSeconds', 'bytes', 'lastOp',
                    'latenessSeconds', 'lastCount', 'resets', 'exitCode', 'cause'];
  var NUMERIC = {pid: 1, ops: 1, collectiveSeconds: 1, betweenSeconds: 1, bytes: 1, latenessSeconds: 1,
                 lastCount: 1, resets: 1, exitCode: 1};

  function rankRow(tbody, rank) {
    var row = tbody.querySelector('tr[data-rank="' + rank + '"]');
    if (row) { return row; }
    row = el('tr', {'data-rank': String(rank)});
    RANK_CELLS.forEach(function (field, i) {
      var cell = el(i === 0 ? 'th' : 'td', {'data-field': field});
      if (i === 0) { cell.setAttribute('scope', 'row'); }
      if (NUMERIC[field]) { cell.className = 'num'; }
      row.appendChild(cell);
    });
    // Rows stay in rank order as ranks appear.
    var next = null;
    Array.prototype.forEach.call(tbody.rows, function (r) {
      if (next === null && Number(r.getAttribute('data-rank')) > rank) { next = r; }
    });
    tbody.insertBefore(row, next);
    return row;
  }

  function cell(row, field) { return row.querySelector('[data-field="' + field + '"]'); }

  function renderRanks(job) {
    var tbody = $('ranks').tBodies[0];
    var seen = {};
    (job.ranks || []).forEach(function (r) {
      seen[r.rank] = true;
      var row = rankRow(tbody, r.rank);
      row.classList.toggle('straggler', r.straggler === true);
      row.classList.toggle('failed', r.state === 'FAILED');
      row.setAttribute('data-state', r.state || '');
      var head = cell(row, 'rank');
      head.textContent = r.rank;
      if (r.straggler === true) {
        head.appendChild(el('span', {'class': 'straggler-label',
                                     title: 'The others keep waiting for this rank'}, 'straggler'));
      }
      var stateCell = cell(row, 'state');
      stateBadge(stateCell.firstElementChild || stateCell.appendChild(el('span')), r.state);
      cell(row, 'host').textContent = r.host || '–';
      cell(row, 'pid').textContent = isNumber(r.pid) ? r.pid : '–';
      cell(row, 'ops').textContent = isNumber(r.ops) ? r.ops : '–';
      cell(row, 'collectiveSeconds').textContent = fixed(r.collectiveSeconds, 2);
      cell(row, 'betweenSeconds').textContent = fixed(r.betweenSeconds, 2);
      cell(row, 'bytes').textContent = bytes(r.bytes);
      cell(row, 'lastOp').textContent = r.lastOp ?
          r.lastOp + (isNumber(r.lastOpAgoSeconds) ? ' (' + r.lastOpAgoSeconds.toFixed(1) + ' s ago)' : '') : '–';
      cell(row, 'latenessSeconds').textContent = fixed(r.latenessSeconds, 3);
      cell(row, 'lastCount').textContent = isNumber(r.lastCount) ? r.lastCount : '–';
      cell(row, 'resets').textContent = isNumber(r.resets) ? r.resets : '–';
      cell(row, 'exitCode').textContent = isNumber(r.exitCode) ? r.exitCode : '–';
      cell(row, 'cause').textContent = r.cause || '';
    });
    Array.prototype.slice.call(tbody.rows).forEach(function (row) {
      if (!seen[row.getAttribute('data-rank')]) { tbody.removeChild(row); }
    });
  }

  function renderFailures(job) {
    var list = $('failures');
    list.textContent = '';
    (job.ranks || []).filter(function (r) { return r.state === 'FAILED'; }).forEach(function (r) {
      var text = 'Rank ' + r.rank + (r.host ? ' on ' + r.host : '') + ' failed' +
          (isNumber(r.exitCode) ? ' with exit code ' + r.exitCode : '') + (r.cause ? ': ' + r.cause : '');
      list.appendChild(el('li', {'data-rank': String(r.rank)}, text));
    });
    $('failures-section').hidden = list.children.length === 0;
  }

  function renderStalls(job) {
    var stalls = job.stalls || [];
    var table = $('stalls'), tbody = table.tBodies[0];
    tbody.textContent = '';
    stalls.forEach(function (s) {
      var row = el('tr', {'data-op': s.op || ''});
      row.appendChild(el('td', null, s.op || '–'));
      row.appendChild(el('td', null, (s.missingRanks || []).join(', ')));
      row.appendChild(el('td', {'class': 'num'}, fixed(s.seconds, 1)));
      tbody.appendChild(row);
    });
    table.hidden = stalls.length === 0;
    $('stalls-none').hidden = stalls.length > 0;
  }

  function renderEvents(job) {
    var list = $('events');
    var all = job.events || [];
    // Unchanged events leave the list (and where the reader scrolled it) alone.
    var key = all.length + '/' + (all.length ? all[all.length - 1].timeMillis + all[all.length - 1].message : '');
    if (list.getAttribute('data-key') === key) { return; }
    list.setAttribute('data-key', key);
    var events = all.slice(-MAX_EVENTS).reverse();
    var start = job.startedAtMillis;
    list.textContent = '';
    events.forEach(function (ev) {
      var item = el('li', {'data-kind': ev.kind || ''});
      var at = isNumber(ev.timeMillis) ? new Date(ev.timeMillis) : null;
      var time = el('time', at ? {datetime: at.toISOString()} : null,
                    at && isNumber(start) ? '+' + duration((ev.timeMillis - start) / 1000) : '');
      item.appendChild(time);
      item.appendChild(el('span', {'class': 'kind'}, ev.kind || ''));
      item.appendChild(document.createTextNode(ev.message || ''));
      list.appendChild(item);
    });
    if (events.length === 0) { list.appendChild(el('li', null, 'No event yet.')); }
  }

  function renderOutput(job) {
    var box = $('output');
    (job.ranks || []).forEach(function (r) {
      var part = box.querySelector('.rank-output[data-rank="' + r.rank + '"]');
      if (!part) {
        part = el('section', {'class': 'rank-output', 'data-rank': String(r.rank)});
        part.appendChild(el('h3', null, 'Rank ' + r.rank));
        part.appendChild(el('pre'));
        box.appendChild(part);
      }
      var pre = part.querySelector('pre');
      var text = (r.output || []).join('\n') || '(no output)';
      if (pre.textContent !== text) {
        var atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        pre.textContent = text;
        if (atBottom) { pre.scrollTop = pre.scrollHeight; }
      }
    });
  }

  // --- charts -------------------------------------------------------------------------------------------------

  // Points of one metric, per rank, on one x axis: steps when every point has one, else seconds since the start.
  function series(points, start) {
    var byStep = points.every(function (p) { return isNumber(p.step) && p.step >= 0; });
    var ranks = [], perRank = {}, xs = {};
    points.forEach(function (p) {
      var x = byStep ? p.step : (p.timeMillis - start) / 1000;
      if (!isNumber(x) || !isNumber(p.value)) { return; }
      if (!perRank[p.rank]) { perRank[p.rank] = {}; ranks.push(p.rank); }
      perRank[p.rank][x] = p.value;
      xs[x] = true;
    });
    ranks.sort(function (a, b) { return a - b; });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    var data = [x];
    ranks.forEach(function (r) {
      data.push(x.map(function (v) { return v in perRank[r] ? perRank[r][v] : null; }));
    });
    return {xKind: byStep ? 'step' : 'seconds since start', ranks: ranks, data: data};
  }

  function chartWidth(figure) {
    return Math.max(300, Math.floor(figure.clientWidth) - 16);
  }

  function makePlot(figure, name, s) {
    var opts = {
      width: chartWidth(figure),
      height: 220,
      scales: {x: {time: false}},
      axes: [{label: s.xKind}, {label: name.indexOf('kolo_') === 0 ? '' : name}],
      series: [{label: s.xKind}].concat(s.ranks.map(function (r) {
        return {label: 'rank ' + r, stroke: COLORS[r % COLORS.length], width: 1.5, spanGaps: true,
                points: {show: s.data[0].length <= 60}};
      }))
    };
    return new uPlot(opts, s.data, figure.querySelector('.plot'));
  }

  function chartFigure(name) {
    var figure = el('figure', {'class': 'chart', 'data-metric': name});
    var caption = el('figcaption', null, ENGINE_SERIES[name] || name);
    if (ENGINE_SERIES[name]) { caption.appendChild(el('span', {'class': 'chart-note'}, ' (' + name + ')')); }
    figure.appendChild(caption);
    figure.appendChild(el('div', {'class': 'plot', role: 'img',
                                  'aria-label': (ENGINE_SERIES[name] || name) + ', one line per rank'}));
    return figure;
  }

  function renderCharts(job) {
    var byName = {};
    (job.metrics || []).forEach(function (p) {
      // "progress" is the header's bar and time left; a chart of it would say the same again.
      if (!p || typeof p.name !== 'string' || p.name === 'progress') { return; }
      (byName[p.name] = byName[p.name] || []).push(p);
    });
    // The program's metrics first, by name, then the engine's throughput and time in collectives.
    var names = Object.keys(byName).sort(function (a, b) {
      var ea = a.indexOf('kolo_') === 0, eb = b.indexOf('kolo_') === 0;
      return ea === eb ? (a < b ? -1 : a > b ? 1 : 0) : (ea ? 1 : -1);
    });
    var box = $('charts');
    $('charts-none').hidden = names.length > 0;
    if (typeof uPlot === 'undefined') {
      $('charts-none').hidden = false;
      $('charts-none').textContent = 'The chart library did not load; the tables above are complete.';
      return;
    }
    names.forEach(function (name) {
      var s = series(byName[name], job.startedAtMillis || 0);
      var c = charts[name];
      if (!c) {
        c = charts[name] = {figure: chartFigure(name)};
        box.appendChild(c.figure);
      }
      // uPlot keeps its series fixed: a new rank or another x axis makes a new plot.
      if (c.plot && (c.ranks.join(',') !== s.ranks.join(',') || c.xKind !== s.xKind)) {
        c.plot.destroy();
        c.plot = null;
      }
      if (!c.plot) {
        c.plot = makePlot(c.figure, name, s);
        c.ranks = s.ranks;
        c.xKind = s.xKind;
      } else {
        c.plot.setData(s.data);
      }
      c.figure.setAttribute('data-points', String(s.data.slice(1).reduce(function (n, ys) {
        return n + ys.filter(function (v) { return v !== null; }).length;
      }, 0)));
    });
    Array.prototype.forEach.call(box.children, function (figure) { figure.hidden = !byName[figure.dataset.metric]; });
    // Order follows the sorted names.
    names.forEach(function (name) { box.appendChild(charts[name].figure); });
    // A new chart narrows the others that share its row.
    fitCharts();
  }

  function fitCharts() {
    Object.keys(charts).forEach(function (name) {
      var c = charts[name];
      if (c.plot && c.plot.width !== chartWidth(c.figure)) {
        c.plot.setSize({width: chartWidth(c.figure), height: 220});
      }
    });
  }

  window.addEventListener('resize', fitCharts);

  // --- the whole page -----------------------------------------------------------------------------------------

  function render(job) {
    lastJob = job;
    renderHeader(job);
    renderRanks(job);
    renderFailures(job);
    renderStalls(job);
    renderCharts(job);
    renderEvents(job);
    renderOutput(job);
    document.body.setAttribute('data-job-state', job.state || '');
  }

  // The status line is a live region: it changes only when what it says changes, so a screen reader says it once.
  function say(node, text) {
    if (node.textContent !== text) { node.textContent = text; }
  }

  function finished(state) { return state === 'SUCCEEDED' || state === 'FAILED'; }

  // The token the page was opened with goes with every request (bound beyond loopback, the server wants it).
  function apiUrl() {
    var token = new URLSearchParams(window.location.search).get('token');
    var query = [];
    if (token) { query.push('token=' + encodeURIComponent(token)); }
    if (cursor !== null) { query.push('since=' + cursor); }
    return 'api/job' + (query.length ? '?' + query.join('&') : '');
  }

  // An answer since the page's cursor holds only newer points: they join those the page has. Any other answer (the
  // first, or one whose view does not know the cursor) holds every point, and replaces them.
  function mergePoints(job) {
    if (!(isNumber(job.metricsSince) && job.metricsSince === cursor)) { points = {}; }
    (job.metrics || []).forEach(function (p) {
      if (!p) { return; }
      var key = p.name + ' ' + p.rank;
      var list = points[key] || (points[key] = []);
      list.push(p);
      if (list.length > MAX_POINTS) { list.splice(0, list.length - MAX_POINTS); }
    });
    cursor = isNumber(job.metricsCursor) ? job.metricsCursor : null;
    var all = [];
    Object.keys(points).forEach(function (key) { Array.prototype.push.apply(all, points[key]); });
    job.metrics = all;
    return job;
  }

  function poll() {
    var status = $('connection');
    fetch(apiUrl(), {cache: 'no-store'}).then(function (response) {
      if (!response.ok) { throw new Error('the launcher answered HTTP ' + response.status); }
      return response.json();
    }).then(function (job) {
      render(mergePoints(job));
      status.classList.remove('lost');
      say(status, finished(job.state) ? 'The job has ended; this is its final view.' : 'Live: updated every second.');
      if (!finished(job.state)) { window.setTimeout(poll, POLL_MILLIS); }
    }).catch(function (err) {
      status.classList.add('lost');
      // The launcher serves the view only while the job runs: once it is gone the job has most likely ended.
      say(status, 'Cannot reach the job (' + err.message + ')' +
          (lastJob ? ': it has probably ended (kolo run --report keeps its final view). Showing the last view; ' :
                     '. ') + 'retrying.');
      window.setTimeout(poll, POLL_MILLIS);
    });
  }

  function start() {
    var embedded = $('kolo-job');
    if (embedded) {
      document.body.classList.add('frozen');
      $('connection').textContent = 'Report: the job as it was when it ended. This page does not update.';
      render(JSON.parse(embedded.textContent));
    } else {
      poll();
    }
  }

  start();
}());
