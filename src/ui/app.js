// mem ui: search as you type (debounced; the server renders the results) and "select all" on
// the prune review. The pages work without it.
"use strict";
(function () {
  const form = document.getElementById("search");
  const results = document.getElementById("results");
  if (form && results) {
    let timer = null;
    let seq = 0;
    form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        const params = new URLSearchParams(new FormData(form));
        // Relative, as every link of the pages: the address keeps its secret prefix.
        const url = form.getAttribute("action") + "?" + params.toString();
        const mine = ++seq;
        fetch(url, { credentials: "same-origin" })
          .then(function (r) { return r.text(); })
          .then(function (text) {
            if (mine !== seq) return;
            const doc = new DOMParser().parseFromString(text, "text/html");
            const fresh = doc.getElementById("results");
            if (fresh) results.replaceChildren(...fresh.childNodes);
            history.replaceState(null, "", url);
          });
      }, 250);
    });
  }
  const all = document.getElementById("select-all");
  if (all) {
    // Without the script the button would do nothing: it is hidden until the script runs.
    all.hidden = false;
    all.addEventListener("click", function () {
      document.querySelectorAll("#archive input[type=checkbox]").forEach(function (box) {
        box.checked = true;
      });
    });
  }
})();
