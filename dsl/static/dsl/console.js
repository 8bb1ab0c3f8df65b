// The query console, enhanced: forms run without a page reload (the server renders the same
// page; its result, history and statement are swapped in), Ctrl/Cmd+Enter runs, sidebar links fill
// the textarea, a column name is inserted at the cursor. Without this file every form still works.
(function () {
  "use strict";
  var main = document.querySelector("main.console");
  var form = document.getElementById("console-form");
  if (!main || !form || !window.fetch || !window.DOMParser) return;
  document.documentElement.classList.add("js");
  var textarea = document.getElementById("sql");

  function selectOffending() {
    var marker = document.getElementById("marker");
    if (!marker || marker.dataset.offset === "") return;
    var start = parseInt(marker.dataset.offset, 10);
    if (isNaN(start)) return;
    var rest = textarea.value.slice(start).match(/^[^\s,;()]+/);
    textarea.focus();
    textarea.setSelectionRange(start, start + (rest ? rest[0].length : 0));
  }

  function swap(html) {
    var page = new DOMParser().parseFromString(html, "text/html");
    ["result", "history"].forEach(function (id) {
      var fresh = page.getElementById(id);
      var current = document.getElementById(id);
      if (fresh && current) current.replaceWith(fresh);
    });
    var sql = page.getElementById("sql");
    if (sql) textarea.value = sql.value;
    var picker = page.getElementById("workspace_id");
    if (picker) document.getElementById("workspace_id").value = picker.value;
    var dry = page.getElementById("dry_run");
    if (dry) document.getElementById("dry_run").checked = dry.checked;
    textarea.focus();
    selectOffending();
  }

  function run(target) {
    var body = new FormData(target);
    main.classList.add("busy");
    fetch(target.action, { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) {
        if (response.redirected || !response.ok) throw new Error("fallback");
        return response.text();
      })
      .then(swap)
      .catch(function () { HTMLFormElement.prototype.submit.call(target); })
      .finally(function () { main.classList.remove("busy"); });
  }

  main.addEventListener("submit", function (event) {
    var target = event.target;
    if (target.method.toLowerCase() !== "post" || !target.action.match(/\/console\/$/)) return;
    event.preventDefault();
    run(target);
  });

  textarea.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit ? form.requestSubmit() : run(form);
    }
  });

  main.addEventListener("click", function (event) {
    var fill = event.target.closest("a.fill");
    if (fill) {
      event.preventDefault();
      textarea.value = fill.dataset.sql;
      textarea.focus();
      return;
    }
    var column = event.target.closest("code.column");
    if (column) {
      var start = textarea.selectionStart, end = textarea.selectionEnd;
      var name = column.dataset.insert;
      textarea.value = textarea.value.slice(0, start) + name + textarea.value.slice(end);
      textarea.focus();
      textarea.setSelectionRange(start + name.length, start + name.length);
    }
  });

  selectOffending();
})();
