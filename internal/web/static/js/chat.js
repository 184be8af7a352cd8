// chat.js: following replies as they are written, and the composer.
//
// A bubble whose reply is still being written carries its stream's URL in
// data-stream. We open an EventSource on it; every frame carries a whole
// block (render, reasoning, metrics, status), morphed into place through
// htmx so an open <details>, a selection and the scroll position survive;
// done carries the finished bubble, and the next one when a queued turn
// was delivered. Closing the page never stops a reply: the server writes
// it whoever watches.
(function () {
  "use strict";

  const transcript = document.getElementById("transcript");
  const composer = document.getElementById("composer");
  const input = composer && composer.querySelector("[data-composer-input]");
  const button = composer && composer.querySelector("[data-composer-button]");
  const sources = new Map(); // message id -> EventSource

  // ---- following the bottom ----

  // The thread follows the bottom while a reply streams, unless the reader
  // scrolled up or opened a block to read it.
  let follow = true;
  const scroller = transcript;
  function atBottom() {
    if (!scroller) return true;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
  }
  if (scroller) {
    scroller.addEventListener("scroll", () => { follow = atBottom(); }, { passive: true });
  }
  function keepAtBottom() {
    if (follow && scroller) scroller.scrollTop = scroller.scrollHeight;
  }
  if (transcript) {
    transcript.addEventListener("toggle", (event) => {
      if (event.target.open) follow = false;
    }, true);
  }

  // ---- swapping whole blocks ----

  function morph(target, html, style) {
    if (!target) return;
    if (window.htmx && typeof window.htmx.swap === "function") {
      window.htmx.swap({ target: target, text: html, swap: style || "innerMorph", sourceElement: target });
    } else {
      // Without htmx the server's HTML (sanitised there) replaces the block.
      const tpl = document.createElement("template");
      tpl.innerHTML = html;
      if (style === "outerMorph") target.replaceWith(tpl.content);
      else target.replaceChildren(tpl.content);
    }
  }

  // ---- streams ----

  function connectAll(root) {
    for (const bubble of (root || document).querySelectorAll("[data-stream]")) connect(bubble);
    updateButton();
  }

  function connect(bubble) {
    const id = bubble.dataset.message;
    if (!id || sources.has(id)) return;
    const es = new EventSource(bubble.dataset.stream);
    sources.set(id, es);
    const region = (name) => document.getElementById(name + "-" + id);
    const on = (name, fn) => es.addEventListener(name, (event) => { fn(event.data); keepAtBottom(); });
    on("render", (html) => morph(region("body"), html));
    on("reasoning", (html) => morph(region("reasoning"), html));
    on("metrics", (html) => morph(region("metrics"), html));
    on("status", (html) => morph(region("status"), html));
    on("done", (html) => {
      // The bubble is finished; the stream stays open only for the title.
      const current = document.getElementById("m-" + id);
      if (current) {
        const tpl = document.createElement("template");
        // html is the server's bubble template, sanitised where it holds
        // model output.
        tpl.innerHTML = html;
        const fresh = Array.from(tpl.content.children);
        // Blocks the reader opened stay open in the finished bubble.
        const open = Array.from(current.querySelectorAll("details[open][id]"), (d) => d.id);
        // A bubble arriving again (the delivered queued turn) replaces
        // its old self rather than standing twice.
        for (const el of fresh) {
          const stale = el.id && document.getElementById(el.id);
          if (stale && stale !== current) stale.remove();
        }
        current.replaceWith(...fresh);
        for (const oid of open) {
          const d = document.getElementById(oid);
          if (d) d.open = true;
        }
        for (const el of fresh) if (window.htmx) window.htmx.process(el);
      }
      demoteOlderReplies();
      sources.delete(id);
      connectAll(transcript);
      notifyArrival();
    });
    on("title", (html) => {
      const tpl = document.createElement("template");
      tpl.innerHTML = html;
      const heading = tpl.content.getElementById("chat-title");
      const row = tpl.content.querySelector("[hx-swap-oob]");
      if (heading) morph(document.getElementById("chat-title"), heading.outerHTML, "outerMorph");
      if (row) {
        const mine = document.getElementById(row.id);
        if (mine) mine.textContent = row.textContent;
      }
      const input = document.querySelector("[data-title-input]");
      if (input) document.title = input.value + " · " + document.title.split(" · ").pop();
      es.close();
    });
    es.addEventListener("error", () => {
      // After done the server closes the stream: the browser would
      // reconnect to a finished reply. Close it unless it is still ours.
      if (!sources.has(id)) es.close();
    });
  }

  // Only the last reply offers Regenerate.
  function demoteOlderReplies() {
    if (!transcript) return;
    const replies = transcript.querySelectorAll(".msg-assistant");
    const last = replies[replies.length - 1];
    for (const r of replies) {
      if (r === last) continue;
      const regen = r.querySelector("[data-action=regenerate]");
      if (regen && regen.form) regen.form.remove();
    }
  }

  function notifyArrival() {
    if (document.hidden && window.lembas) window.lembas.notify("A reply has arrived.", "success");
  }

  // ---- the composer: Send and Stop are one button ----

  function busy() {
    return !!(transcript && transcript.querySelector("[data-stream]"));
  }

  function updateButton() {
    if (!button) return;
    const stop = busy() && !!button.dataset.stopUrl;
    button.dataset.mode = stop ? "stop" : "send";
    button.type = stop ? "button" : "submit";
    button.classList.toggle("btn-danger", stop);
    button.classList.toggle("btn-primary", !stop);
    button.setAttribute("aria-label", stop ? "Stop the reply" : "Send");
  }

  async function stopReply() {
    if (!button || !button.dataset.stopUrl) return;
    try {
      const res = await fetch(button.dataset.stopUrl, {
        method: "POST",
        headers: { "HX-Request": "true" },
        credentials: "same-origin",
      });
      await res.text();
    } catch (_) {
      if (window.lembas) window.lembas.notify("Could not reach the server to stop the reply.", "error");
    }
  }

  if (button) {
    button.addEventListener("click", (event) => {
      if (button.dataset.mode === "stop") {
        event.preventDefault();
        stopReply();
      }
    });
  }

  function grow() {
    if (!input) return;
    input.classList.add("is-measuring");
    const h = input.scrollHeight;
    input.classList.remove("is-measuring");
    input.rows = Math.min(12, Math.max(1, Math.round(h / (parseFloat(getComputedStyle(input).lineHeight) || 24))));
  }

  if (input) {
    input.addEventListener("input", grow);
    input.addEventListener("keydown", (event) => {
      if (event.isComposing) return;
      if (event.key === "Enter" && !event.shiftKey && !event.altKey) {
        event.preventDefault();
        if (input.value.trim() !== "") composer.requestSubmit();
      } else if (event.key === "Escape" && busy()) {
        event.preventDefault();
        stopReply();
      }
    });
    grow();
  }

  if (composer) {
    // Ctrl/⌘+Enter sends from anywhere in the form.
    composer.addEventListener("keydown", (event) => {
      // The box's own Enter handler may have sent already.
      if (event.defaultPrevented) return;
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        if (input && input.value.trim() !== "") composer.requestSubmit();
      }
    });
    // Sending while a reply is written is allowed: the server queues it.
    composer.addEventListener("submit", (event) => {
      if (button && button.dataset.mode === "stop" && event.submitter === button) event.preventDefault();
    });
  }

  // Esc stops from anywhere on the page.
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && busy() && !event.defaultPrevented && !document.querySelector("dialog[open]")) {
      stopReply();
    }
  });

  // After htmx appended a send's bubbles: clear the box, follow the new
  // reply.
  document.addEventListener("htmx:after:swap", (event) => {
    const src = event.target;
    if (composer && (src === composer || composer.contains(src))) {
      if (input) {
        input.value = "";
        grow();
        input.focus();
      }
      follow = true;
      demoteOlderReplies();
    }
    connectAll(transcript);
    keepAtBottom();
  });

  // ---- message actions ----

  document.addEventListener("click", (event) => {
    const el = event.target.closest("[data-action]");
    if (!el) return;
    const msg = el.closest(".msg");
    switch (el.dataset.action) {
      case "edit-message": {
        const form = msg && msg.querySelector("[data-edit-form]");
        if (!form) return;
        form.hidden = false;
        const area = form.querySelector("textarea");
        area.focus();
        area.setSelectionRange(area.value.length, area.value.length);
        break;
      }
      case "cancel-edit": {
        const form = el.closest("[data-edit-form]");
        if (form) form.hidden = true;
        break;
      }
      case "copy-reply": {
        const body = msg && msg.querySelector(".msg-body");
        if (!body) return;
        navigator.clipboard.writeText(body.innerText).then(
          () => window.lembas && window.lembas.notify("Copied.", "success"),
          () => window.lembas && window.lembas.notify("Copying was not allowed by the browser.", "error"),
        );
        break;
      }
    }
  });

  // A code block's Copy button.
  document.addEventListener("click", (event) => {
    const copy = event.target.closest("[data-copy]");
    if (!copy) return;
    const code = copy.closest(".code-block");
    const pre = code && code.querySelector("pre");
    if (!pre) return;
    navigator.clipboard.writeText(pre.innerText).then(
      () => { copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy"; }, 1500); },
      () => window.lembas && window.lembas.notify("Copying was not allowed by the browser.", "error"),
    );
  });

  // The chat settings panel.
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest("[data-toggle-panel]");
    if (!toggle) return;
    const panel = document.getElementById(toggle.dataset.togglePanel);
    if (!panel) return;
    panel.hidden = !panel.hidden;
    for (const t of document.querySelectorAll('[data-toggle-panel="' + panel.id + '"]')) {
      t.setAttribute("aria-expanded", String(!panel.hidden));
    }
    if (!panel.hidden) {
      const first = panel.querySelector("textarea, input, select");
      if (first) first.focus();
    }
  });

  // Renaming from the heading: Enter saves, Escape puts the old title back.
  document.addEventListener("keydown", (event) => {
    const field = event.target.closest && event.target.closest("[data-title-input]");
    if (!field) return;
    if (event.key === "Escape") {
      field.value = field.defaultValue;
      field.blur();
    }
  });
  document.addEventListener("focusout", (event) => {
    const field = event.target.closest && event.target.closest("[data-title-input]");
    if (field && field.value.trim() !== "" && field.value !== field.defaultValue) field.form.requestSubmit();
  });

  connectAll(document);
  keepAtBottom();
})();
