/* Marks content that does not fit the reading column, as a reader's window shows it.
 *
 * After the page has loaded and MathJax has typeset it, every display equation and every table in
 * the page's article is measured: it is "cut off on the right" when its content is wider than the
 * box that holds it (the nearest enclosing element that clips or scrolls, MathJax's own container
 * included) or when it reaches past the right edge of the article; an equation is also marked
 * when its container scrolls vertically (a scrollbar shows beside it). Such an element gets the
 * attribute data-epsaudit-overflow ("width <content px> > <available px>", "vertical scrollbar")
 * and a readable data-epsaudit-overflow-label (kind, section, start of its TeX or header), and
 * a console warning; <body> gets data-epsaudit-layout="checked ..." with the counts, so a reader of the DOM
 * (the book test: headless Chromium at 1280 px, --dump-dom) knows the check ran. It runs again
 * when the window is resized. It changes nothing a reader sees.
 */
(function () {
  "use strict";

  var MARK = "data-epsaudit-overflow";
  var LABEL = "data-epsaudit-overflow-label";
  var TOLERANCE = 1; // px: sub-pixel rounding is not overflow

  function contentBoxWidth(box) {
    var style = window.getComputedStyle(box);
    return box.clientWidth - parseFloat(style.paddingLeft || "0") - parseFloat(style.paddingRight || "0");
  }

  function clips(box) {
    var x = window.getComputedStyle(box).overflowX;
    return x !== "visible" && x !== "";
  }

  // The box whose width the element must fit: itself when it scrolls or clips (MathJax's
  // mjx-container does), else the nearest enclosing clipping box inside the article, else the article.
  function holder(el, article) {
    if (clips(el)) return el;
    for (var box = el.parentElement; box && box !== article; box = box.parentElement) {
      if (clips(box)) return box;
    }
    return article;
  }

  function section(el) {
    var sec = el.closest("section");
    if (!sec) return "";
    var heading = sec.querySelector("h1, h2, h3, h4, h5, h6");
    var title = heading ? heading.textContent.replace(/[#¶]/g, "").trim() : "";
    return (title ? '"' + title + '"' : "") + (sec.id ? " (#" + sec.id + ")" : "");
  }

  function snippet(el, kind) {
    var text = "";
    if (kind === "equation") {
      try { // the TeX source, when MathJax can tell
        var items = window.MathJax.startup.document.getMathItemsWithin(el);
        if (items && items.length) text = String(items[0].math);
      } catch (e) { text = ""; }
    } else {
      var row = el.querySelector("tr");
      if (row) text = row.textContent;
    }
    if (!text) text = el.textContent || "";
    text = text.replace(/\s+/g, " ").trim();
    return text.length > 80 ? text.slice(0, 77) + "..." : text;
  }

  // Width of what a reader sees: for a MathJax container its typeset children, not the hidden
  // assistive MathML copy (absolutely positioned, as wide as the container, clipped to nothing).
  function contentWidth(el) {
    var rect = el.getBoundingClientRect();
    if (el.tagName.toLowerCase() !== "mjx-container") {
      // a box that scrolls itself: its scrolled content (its border is not content)
      return clips(el) ? el.scrollWidth : Math.max(el.scrollWidth, rect.width);
    }
    var right = rect.left;
    Array.prototype.forEach.call(el.children, function (child) {
      if (child.tagName.toLowerCase() !== "mjx-assistive-mml") {
        right = Math.max(right, child.getBoundingClientRect().right);
      }
    });
    return right - rect.left;
  }

  // An element that scrolls itself vertically shows a scrollbar (MathJax's container does when a
  // glyph reaches a pixel or two below it).
  function scrollsVertically(el) {
    var y = window.getComputedStyle(el).overflowY;
    return (y === "auto" || y === "scroll") && el.scrollHeight > el.clientHeight + TOLERANCE;
  }

  function candidates(article) {
    var found = [];
    article.querySelectorAll('mjx-container[display="true"]').forEach(function (el) {
      found.push({ el: el, kind: "equation" });
    });
    // Display math MathJax has not typeset (it failed or is absent) is measured as written.
    article.querySelectorAll("div.math").forEach(function (el) {
      if (!el.querySelector("mjx-container")) found.push({ el: el, kind: "equation" });
    });
    article.querySelectorAll("table").forEach(function (el) {
      if (!el.parentElement.closest("table")) found.push({ el: el, kind: "table" });
    });
    article.querySelectorAll("pre").forEach(function (el) {
      found.push({ el: el, kind: "code" });
    });
    return found;
  }

  // ?epsaudit=open (the book test): every dropdown, solution and toggled block is opened first, so
  // what a reader sees after opening them is measured too. Without it nothing is opened.
  function openEverything() {
    if (window.location.search.indexOf("epsaudit=open") < 0) return false;
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
    document.querySelectorAll(".toggle-hidden").forEach(function (el) { el.classList.remove("toggle-hidden"); });
    return true;
  }

  // Each figure image's displayed width over its natural width (the test turns it into the size in
  // px of the figure's smallest text): data-epsaudit-image-scale on the <img>.
  function markImageScales(article) {
    var scales = [];
    article.querySelectorAll("figure img").forEach(function (img) {
      if (!img.naturalWidth) return;
      var scale = img.getBoundingClientRect().width / img.naturalWidth;
      img.setAttribute("data-epsaudit-image-scale", scale.toFixed(4));
      scales.push(scale);
    });
    return scales.length ? Math.min.apply(null, scales) : 0;
  }

  function check() {
    var opened = openEverything();
    var article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
    void article.offsetHeight; // lay out the opened blocks before measuring
    var right = article.getBoundingClientRect().right - parseFloat(window.getComputedStyle(article).paddingRight || "0");
    var counts = { equation: 0, table: 0, code: 0 };
    var overflowing = [];
    document.querySelectorAll("[" + MARK + "]").forEach(function (el) {
      el.removeAttribute(MARK);
      el.removeAttribute(LABEL);
    });
    candidates(article).forEach(function (c) {
      var el = c.el;
      counts[c.kind] += 1;
      var rect = el.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0) return; // hidden (e.g. a collapsed cell)
      var box = holder(el, article);
      var content = contentWidth(el);
      var room = box === el ? el.clientWidth : contentBoxWidth(box);
      var pastEdge = rect.right > right + TOLERANCE;
      var vertical = c.kind === "equation" && scrollsVertically(el);
      if (content > room + TOLERANCE || pastEdge || vertical) {
        var x = window.getComputedStyle(box).overflowX;
        var how = box === article ? "sticks out of the article" :
          (x === "hidden" || x === "clip" ? "clipped" : "scrolls sideways");
        if (content <= room + TOLERANCE && !pastEdge) how = "fits its width";
        if (vertical) how += "; shows a vertical scrollbar (" + el.scrollHeight + " px of content in " + el.clientHeight + " px)";
        var label = c.kind + (section(el) ? " in section " + section(el) : "") + ", " +
          Math.round(rect.top + window.scrollY) + " px from the top: " +
          Math.round(content) + " px wide, " + Math.round(room) + " px available, " + how +
          (pastEdge ? ", reaches " + Math.round(rect.right - right) + " px past the article's right edge" : "") +
          ' -- "' + snippet(el, c.kind) + '"';
        var wide = content > room + TOLERANCE || pastEdge;
        el.setAttribute(MARK, (wide ? "width " + Math.round(content) + " > " + Math.round(room) : "") +
          (wide && vertical ? "; " : "") + (vertical ? "vertical scrollbar" : ""));
        el.setAttribute(LABEL, label);
        overflowing.push(label);
      }
    });
    var minScale = markImageScales(article);
    document.body.setAttribute(
      "data-epsaudit-layout",
      "checked width=" + window.innerWidth + " opened=" + (opened ? "all" : "none") +
        " min-image-scale=" + minScale.toFixed(4) + " equations=" + counts.equation + " tables=" + counts.table +
        " code=" + counts.code +
        " overflowing=" + overflowing.length + " mathjax=" + (window.MathJax && window.MathJax.startup ? "yes" : "no")
    );
    overflowing.forEach(function (label) {
      window.console && console.warn("epsaudit: cut off on the right at " + window.innerWidth + " px: " + label);
    });
  }

  // Wait for MathJax (loaded with defer) to finish its first typesetting; give up after 10 s.
  function whenTypeset(done) {
    var waited = 0;
    (function poll() {
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) {
        mj.startup.promise.then(done, done);
      } else if (!document.querySelector(".math, script[src*='mathjax']") || waited >= 10000) {
        done();
      } else {
        waited += 100;
        window.setTimeout(poll, 100);
      }
    })();
  }

  function start() {
    whenTypeset(function () {
      window.setTimeout(check, 50); // one more layout pass after the last typeset
    });
    var timer = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(check, 250);
    });
  }

  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
