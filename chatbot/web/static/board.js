// Keeps an open page of the board current with server-sent events from /events.
// Nothing reloads: changed cards are swapped in place on the board, and the card
// and runs pages read their main part again. Without JavaScript every page still
// works; it just does not move by itself.
(function () {
  "use strict";
  var body = document.body;
  var view = body.getAttribute("data-view");
  var slug = body.getAttribute("data-slug");
  var mark = body.getAttribute("data-mark");
  var units = JSON.parse(body.getAttribute("data-units") || "{}");
  var live = document.getElementById("live");
  var retryMs = 1000;
  document.documentElement.setAttribute("data-js", "on");

  function age(seconds) {
    var s = Math.max(0, Math.floor(seconds));
    var steps = [["d", 86400], ["h", 3600], ["min", 60]];
    for (var i = 0; i < steps.length; i++) {
      if (s >= steps[i][1]) return units[steps[i][0]].replace("{n}", Math.floor(s / steps[i][1]));
    }
    return units.s.replace("{n}", s);
  }

  function tick() {
    var now = Date.now() / 1000;
    document.querySelectorAll("time[data-since]").forEach(function (el) {
      var text = age(now - Number(el.getAttribute("data-since")));
      if (el.textContent !== text) el.textContent = text;
    });
  }

  function showLive(on) {
    if (!live) return;
    live.hidden = false;
    live.className = on ? "live on" : "live";
    live.textContent = body.getAttribute(on ? "data-live-on" : "data-live-off");
  }

  // The server escaped every value in these fragments; a template never runs scripts.
  function fragment(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }

  // Counts come from the server: a column may show only its most recent cards, and
  // "Waiting for you" counts what the inbox lists (requests too), not cards.
  function recount(counts, cards) {
    if (!counts) return;
    var total = 0;
    Object.keys(counts).forEach(function (group) {
      total += counts[group];
      var count = document.getElementById("count-" + group);
      if (count) count.textContent = String(counts[group]);
      var list = document.getElementById("col-" + group);
      var more = document.querySelector("#group-" + group + " a.more");
      if (list && more) more.hidden = counts[group] <= Number(list.getAttribute("data-cap"));
    });
    if (typeof cards === "number") total = cards;
    // "1 card", "2 cards": the server wrote both forms in the board's language.
    var all = document.getElementById("total");
    if (all) {
      var form = all.getAttribute(total === 1 ? "data-one" : "data-many") || all.textContent;
      all.textContent = form.replace(/\d+/, String(total));
    }
  }

  // Only the changed cards move; a column keeps its most recent data-cap cards (one
  // that loses a card shows one fewer until the page is next loaded).
  function applyCards(cards, counts, total) {
    cards.slice().reverse().forEach(function (card) {
      var old = document.getElementById("card-" + card.slug);
      if (old) old.remove();
      var list = document.getElementById("col-" + card.group);
      if (!list) return;
      list.insertBefore(fragment(card.html), list.firstChild);
      var cap = Number(list.getAttribute("data-cap"));
      while (cap && list.children.length > cap) list.lastElementChild.remove();
    });
    recount(counts, total);
  }

  // Requesters' requests are no cards: the line that counts them comes whole.
  function applyRequests(html) {
    var line = document.getElementById("requests");
    if (line && typeof html === "string") line.replaceWith(fragment(html));
  }

  function reread() {
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main) main.replaceWith(document.importNode(fresh, true));
        tick();
      })
      .catch(function () { showLive(false); });
  }

  function changed(event) {
    var data = JSON.parse(event.data);
    if (event.lastEventId) mark = event.lastEventId;
    if (data.reload) {
      reread();
    } else if (view === "board") {
      applyRequests(data.requests);
      applyCards(data.cards || [], data.counts, data.total);
    } else if (view === "card" && (data.slugs || []).indexOf(slug) >= 0) {
      reread();
    } else if (view === "runs" && data.jobs) {
      reread();
    }
    tick();
  }

  function connect() {
    var url = "/events?view=" + encodeURIComponent(view) + "&since=" + encodeURIComponent(mark);
    var source = new EventSource(url);
    source.addEventListener("open", function () {
      showLive(true);
      retryMs = 1000;
    });
    source.addEventListener("change", changed);
    source.addEventListener("error", function () {
      showLive(false);
      // EventSource retries by itself after a dropped stream (a restart), but gives up
      // on an error page (a proxy while the bot is away): then start a new one.
      if (source.readyState === EventSource.CLOSED) {
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 30000);
      }
    });
  }

  if (window.EventSource && mark) connect();
  setInterval(tick, 30000);
})();
