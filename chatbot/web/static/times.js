// Shows each moment a page gives in UTC (<time datetime="...Z">, its text "... UTC") in
// the reader's own time zone, and keeps the UTC text as its title (on hover). Without
// JavaScript the UTC text stays. Ages (data-since) are board.js's.
(function () {
  "use strict";

  function two(n) {
    return (n < 10 ? "0" : "") + n;
  }

  function local(el) {
    if (el.hasAttribute("data-since") || el.hasAttribute("data-local")) return;
    var at = new Date(el.getAttribute("datetime"));
    if (isNaN(at.getTime())) return;
    el.setAttribute("data-local", "");
    el.title = el.textContent;
    el.textContent = at.getFullYear() + "-" + two(at.getMonth() + 1) + "-" + two(at.getDate()) +
      " " + two(at.getHours()) + ":" + two(at.getMinutes());
  }

  function within(node) {
    if (node.nodeType !== 1) return;
    if (node.matches("time[datetime]")) local(node);
    node.querySelectorAll("time[datetime]").forEach(local);
  }

  within(document.body);
  // board.js reads a page's main part again as the board moves: show what it brings too.
  new MutationObserver(function (changes) {
    changes.forEach(function (change) { change.addedNodes.forEach(within); });
  }).observe(document.body, { childList: true, subtree: true });
})();
