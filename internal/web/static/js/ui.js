// ui.js: LLeMbas's own dialogs and toasts, so nothing falls back to the
// browser's boxes, which ignore the theme and block the page.
//
//   lembas.notify(message, kind)            a toast; kind "error" stays put
//   lembas.confirm(message, options)        Promise<boolean>
//   lembas.prompt(message, options)         Promise<string|null>
//
// It also takes over every confirmation already written in markup:
// hx-confirm (through htmx's htmx:confirm event), data-confirm on a plain
// form, and data-confirm-button on a single button. Failed htmx requests
// become toasts.
//
// Everything is built with DOM calls and textContent: a message is text,
// never markup. Looks come from classes in app.css; nothing here writes a
// style (the CSP forbids inline styles anyway).
(function () {
  "use strict";

  const TOAST_MS = 5000;
  const MAX_TOASTS = 4;
  const KINDS = ["info", "success", "error"];

  // ---------- Toasts ----------

  function toastRegion() {
    let region = document.getElementById("toasts");
    if (!region) {
      region = document.createElement("div");
      region.id = "toasts";
      region.className = "toasts";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    return region;
  }

  function notify(message, kind) {
    const text = String(message == null ? "" : message).trim();
    if (!text) return function () {};
    kind = KINDS.includes(kind) ? kind : "info";
    const region = toastRegion();

    // The same words twice in a row are one toast with a fresh timer.
    for (const existing of region.querySelectorAll(".toast")) {
      if (existing.dataset.kind === kind && existing.lembasText === text) {
        if (existing.lembasRestart) existing.lembasRestart();
        return existing.lembasDismiss;
      }
    }

    const toast = document.createElement("div");
    toast.className = "toast toast-" + kind;
    toast.dataset.kind = kind;
    toast.lembasText = text;

    const body = document.createElement("p");
    body.className = "toast-message";
    body.textContent = text;
    toast.appendChild(body);

    let timer = 0;
    const dismiss = function () {
      clearTimeout(timer);
      toast.remove();
    };
    toast.lembasDismiss = dismiss;

    if (kind === "error") {
      // Errors wait to be read: they go only when dismissed.
      const close = document.createElement("button");
      close.type = "button";
      close.className = "btn btn-quiet toast-dismiss";
      close.textContent = "Dismiss";
      close.addEventListener("click", dismiss);
      toast.appendChild(close);
    } else {
      // Others leave by themselves, but not while someone is reading them.
      const start = function () {
        clearTimeout(timer);
        timer = setTimeout(dismiss, TOAST_MS);
      };
      const hold = function () {
        clearTimeout(timer);
      };
      toast.lembasRestart = start;
      toast.addEventListener("mouseenter", hold);
      toast.addEventListener("mouseleave", start);
      toast.addEventListener("focusin", hold);
      toast.addEventListener("focusout", start);
      start();
    }

    region.appendChild(toast);

    // At most MAX_TOASTS at once: the oldest that can go, goes.
    let toasts = region.querySelectorAll(".toast");
    while (toasts.length > MAX_TOASTS) {
      const oldest = Array.from(toasts).find((t) => t.dataset.kind !== "error") || toasts[0];
      oldest.lembasDismiss ? oldest.lembasDismiss() : oldest.remove();
      toasts = region.querySelectorAll(".toast");
    }
    return dismiss;
  }

  // ---------- Dialogs ----------

  // One dialog at a time: a second request waits for the first to close.
  let queue = Promise.resolve();
  function enqueue(open) {
    const next = queue.then(open);
    queue = next.catch(function () {});
    return next;
  }

  let dialogCount = 0;

  // openDialog shows a modal dialog and resolves with the text of its input
  // (prompt), true (confirm), or null when it is cancelled in any way.
  function openDialog(message, opts) {
    return new Promise(function (resolve) {
      const returnTo = document.activeElement;
      const id = "lembas-dialog-" + ++dialogCount;

      const dialog = document.createElement("dialog");
      dialog.className = "dialog";
      dialog.setAttribute("aria-labelledby", id + "-message");

      const form = document.createElement("form");
      form.className = "dialog-form";
      form.noValidate = true;

      const text = document.createElement("p");
      text.className = "dialog-message";
      text.id = id + "-message";
      text.textContent = String(message == null ? "" : message);
      form.appendChild(text);

      let input = null;
      if (opts.input) {
        const field = document.createElement("label");
        field.className = "field";
        if (opts.label) {
          const label = document.createElement("span");
          label.className = "label";
          label.textContent = String(opts.label);
          field.appendChild(label);
        } else {
          field.setAttribute("aria-labelledby", text.id);
        }
        input = document.createElement("input");
        input.type = "text";
        input.autocomplete = "off";
        input.value = opts.value == null ? "" : String(opts.value);
        if (!opts.label) input.setAttribute("aria-labelledby", text.id);
        field.appendChild(input);
        form.appendChild(field);
      }

      const actions = document.createElement("div");
      actions.className = "dialog-actions";
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.className = "btn btn-quiet";
      cancel.textContent = opts.cancelLabel || "Cancel";
      const ok = document.createElement("button");
      ok.type = "submit";
      ok.className = opts.danger ? "btn btn-danger" : "btn btn-primary";
      ok.textContent = opts.confirmLabel || (opts.input ? "OK" : "Confirm");
      actions.append(cancel, ok);
      form.appendChild(actions);
      dialog.appendChild(form);

      let result = null;
      let settled = false;
      function finish(value) {
        if (settled) return;
        settled = true;
        result = value;
        if (dialog.open) dialog.close();
      }

      form.addEventListener("submit", function (event) {
        event.preventDefault();
        finish(input ? input.value : true);
      });
      cancel.addEventListener("click", function () {
        finish(null);
      });
      // Esc raises "cancel"; the browser then closes the dialog.
      dialog.addEventListener("cancel", function () {
        settled = true;
        result = null;
      });
      // A click on the backdrop (outside the box) cancels too.
      dialog.addEventListener("click", function (event) {
        if (event.target !== dialog) return;
        const r = dialog.getBoundingClientRect();
        const inside =
          event.clientX >= r.left && event.clientX <= r.right &&
          event.clientY >= r.top && event.clientY <= r.bottom;
        if (!inside) finish(null);
      });
      dialog.addEventListener("close", function () {
        dialog.remove();
        if (returnTo && returnTo.isConnected && typeof returnTo.focus === "function") {
          returnTo.focus({ preventScroll: true });
        }
        resolve(result);
      });

      document.body.appendChild(dialog);
      try {
        dialog.showModal();
      } catch (err) {
        // Never leave a caller (or an htmx request) waiting on a dialog
        // that could not open: treat it as cancelled.
        dialog.remove();
        resolve(null);
        return;
      }
      // Focus the safest thing: the text to edit, or Cancel.
      if (input) {
        input.focus();
        input.select();
      } else {
        cancel.focus();
      }
    });
  }

  function askConfirm(message, options) {
    const opts = Object.assign({}, options);
    return enqueue(function () {
      return openDialog(message, opts).then(function (value) {
        return value === true;
      });
    });
  }

  function askText(message, options) {
    const opts = Object.assign({}, options, { input: true });
    return enqueue(function () {
      return openDialog(message, opts).then(function (value) {
        return typeof value === "string" ? value : null;
      });
    });
  }

  // ---------- Confirmations written in markup ----------

  // optionsFor reads what a confirmation should offer from the control that
  // asked for it: an explicit data-confirm-label, else the button's own words
  // (buttons say what they do), and danger when the button looks dangerous.
  function optionsFor(control, fallback) {
    const opts = {};
    const el = control || fallback;
    if (!el) return opts;
    const label =
      (control && control.getAttribute("data-confirm-label")) ||
      (fallback && fallback.getAttribute && fallback.getAttribute("data-confirm-label")) ||
      (control && (control.tagName === "BUTTON" || control.type === "submit") && control.textContent.trim());
    if (label) opts.confirmLabel = label;
    opts.danger = [control, fallback].some(function (e) {
      return e && e.matches && (e.matches(".btn-danger") || e.hasAttribute("data-confirm-danger"));
    });
    return opts;
  }

  // Forms and buttons that have been confirmed once are let through once.
  const confirmed = new WeakSet();

  document.addEventListener(
    "submit",
    function (event) {
      const form = event.target;
      if (!(form instanceof HTMLFormElement)) return;
      const submitter = event.submitter || null;
      const message =
        (submitter && submitter.getAttribute("data-confirm-button")) ||
        form.getAttribute("data-confirm");
      const asks = (submitter && submitter.hasAttribute("data-confirm-button")) || form.hasAttribute("data-confirm");
      if (!asks) return;
      if (confirmed.has(form)) {
        confirmed.delete(form);
        return;
      }
      // Stop it here, before htmx or any other listener sees it.
      event.preventDefault();
      event.stopImmediatePropagation();
      askConfirm(message || "Are you sure?", optionsFor(submitter, form)).then(function (ok) {
        if (!ok || !form.isConnected) return;
        confirmed.add(form);
        if (typeof form.requestSubmit === "function") {
          if (submitter && submitter.form === form) form.requestSubmit(submitter);
          else form.requestSubmit();
        } else {
          confirmed.delete(form);
          form.submit();
        }
      });
    },
    true,
  );

  // A data-confirm-button that does not submit a form (a link, or a plain
  // button): ask on click, then click it again for real.
  document.addEventListener(
    "click",
    function (event) {
      const el = event.target instanceof Element ? event.target.closest("[data-confirm-button]") : null;
      if (!el) return;
      if (el.form && (el.type === "submit" || el.type === "image")) return; // the submit listener asks
      if (confirmed.has(el)) {
        confirmed.delete(el);
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
      askConfirm(el.getAttribute("data-confirm-button") || "Are you sure?", optionsFor(el)).then(function (ok) {
        if (!ok || !el.isConnected) return;
        confirmed.add(el);
        el.click();
      });
    },
    true,
  );

  // hx-confirm: htmx asks through this event before it sends. Always call
  // issueRequest or dropRequest, or the request holds its slot forever.
  document.addEventListener("htmx:confirm", function (event) {
    const detail = event.detail || {};
    const message = detail.ctx && detail.ctx.confirm;
    if (!message) return;
    event.preventDefault();
    const el = event.target instanceof Element ? event.target : null;
    // A form's confirmation takes its words from the button that sent it.
    const source = detail.ctx.sourceEvent;
    const submitter = source && source.submitter instanceof Element ? source.submitter : null;
    askConfirm(String(message), optionsFor(submitter || el, el)).then(
      function (ok) {
        if (ok) detail.issueRequest();
        else detail.dropRequest();
      },
      function () {
        detail.dropRequest();
      },
    );
  });

  // ---------- Failed requests ----------

  const reported = new WeakSet();

  // errorText finds the sentence to show for a failed response: the server's
  // X-Lembas-Error header, else a short plain body, else a generic line. An
  // HTML body is never shown as it is.
  function errorText(ctx) {
    const response = ctx && ctx.response;
    const status = response && response.status;
    const headers = response && response.headers;
    const header = headers && typeof headers.get === "function" ? headers.get("X-Lembas-Error") : "";
    if (header) {
      try {
        return decodeURIComponent(header);
      } catch (err) {
        return header;
      }
    }
    let body = typeof (ctx && ctx.text) === "string" ? ctx.text.trim() : "";
    const type = (headers && typeof headers.get === "function" && headers.get("Content-Type")) || "";
    if (body && (type.includes("html") || body.startsWith("<"))) {
      // Parsed inert: only its words are kept.
      const doc = new DOMParser().parseFromString(body, "text/html");
      body = (doc.body ? doc.body.textContent : "").replace(/\s+/g, " ").trim();
    }
    if (body && body.length <= 300) return body;
    if (status) return "The request failed (" + status + ").";
    return "The request failed.";
  }

  document.addEventListener("htmx:response:error", function (event) {
    const ctx = event.detail && event.detail.ctx;
    if (ctx) {
      if (reported.has(ctx)) return;
      reported.add(ctx);
    }
    notify(errorText(ctx), "error");
  });

  document.addEventListener("htmx:error", function (event) {
    const detail = event.detail || {};
    const ctx = detail.ctx;
    if (ctx) {
      if (reported.has(ctx)) return;
      reported.add(ctx);
    }
    if (ctx && ctx.response && ctx.response.status >= 400) {
      notify(errorText(ctx), "error");
      return;
    }
    const offline = detail.error && detail.error.name === "TypeError";
    notify(offline ? "The server could not be reached. Check the connection and try again." : "Something went wrong with that request.", "error");
  });

  window.lembas = Object.assign(window.lembas || {}, {
    notify: notify,
    confirm: askConfirm,
    prompt: askText,
  });
})();
