// picker.js: the model picker (templates/model_picker.html). A button
// opens a listbox; arrows, Home/End and typed letters move, Enter or Space
// chooses, Escape closes. The choice goes into a hidden input, which fires
// "change" like any form field.
(function () {
  "use strict";

  function parts(picker) {
    return {
      value: picker.querySelector("[data-picker-value]"),
      button: picker.querySelector("[data-picker-button]"),
      face: picker.querySelector("[data-picker-face]"),
      list: picker.querySelector("[data-picker-list]"),
      options: Array.from(picker.querySelectorAll("[role=option]")),
    };
  }

  function open(picker) {
    const p = parts(picker);
    closeAll(picker);
    p.list.hidden = false;
    p.button.setAttribute("aria-expanded", "true");
    const current = p.options.find((o) => o.getAttribute("aria-selected") === "true") || p.options[0];
    setActive(picker, current);
    p.list.focus();
  }

  function close(picker, focusButton) {
    const p = parts(picker);
    if (p.list.hidden) return;
    p.list.hidden = true;
    p.button.setAttribute("aria-expanded", "false");
    p.list.removeAttribute("aria-activedescendant");
    if (focusButton) p.button.focus();
  }

  function closeAll(except) {
    for (const other of document.querySelectorAll("[data-picker]")) {
      if (other !== except) close(other, false);
    }
  }

  function setActive(picker, option) {
    const p = parts(picker);
    for (const o of p.options) o.classList.toggle("is-active", o === option);
    if (!option) return;
    p.list.setAttribute("aria-activedescendant", option.id);
    option.scrollIntoView({ block: "nearest" });
  }

  function choose(picker, option) {
    const p = parts(picker);
    for (const o of p.options) o.setAttribute("aria-selected", String(o === option));
    const face = option.querySelector(".picker-face");
    p.face.replaceChildren(...Array.from(face.cloneNode(true).childNodes));
    const label = option.dataset.label || face.textContent.trim();
    p.button.setAttribute("aria-label", "Model: " + label);
    if (p.value.value !== option.dataset.value) {
      p.value.value = option.dataset.value;
      p.value.dispatchEvent(new Event("change", { bubbles: true }));
    }
    close(picker, true);
  }

  function active(picker) {
    return parts(picker).options.find((o) => o.classList.contains("is-active"));
  }

  let typed = "";
  let typedAt = 0;

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-picker-button]");
    if (button) {
      const picker = button.closest("[data-picker]");
      if (parts(picker).list.hidden) open(picker);
      else close(picker, true);
      return;
    }
    const option = event.target.closest("[data-picker] [role=option]");
    if (option) {
      choose(option.closest("[data-picker]"), option);
      return;
    }
    if (!event.target.closest("[data-picker]")) closeAll(null);
  });

  document.addEventListener("keydown", (event) => {
    const button = event.target.closest && event.target.closest("[data-picker-button]");
    if (button && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      open(button.closest("[data-picker]"));
      return;
    }
    const list = event.target.closest && event.target.closest("[data-picker-list]");
    if (!list) return;
    const picker = list.closest("[data-picker]");
    const options = parts(picker).options;
    if (options.length === 0) {
      if (event.key === "Escape") close(picker, true);
      return;
    }
    const i = options.indexOf(active(picker));
    switch (event.key) {
      case "ArrowDown":
        setActive(picker, options[Math.min(options.length - 1, i + 1)]);
        break;
      case "ArrowUp":
        setActive(picker, options[Math.max(0, i - 1)]);
        break;
      case "Home":
        setActive(picker, options[0]);
        break;
      case "End":
        setActive(picker, options[options.length - 1]);
        break;
      case "Enter":
      case " ":
        if (i >= 0) choose(picker, options[i]);
        break;
      case "Escape":
        close(picker, true);
        break;
      case "Tab":
        close(picker, false);
        return;
      default:
        if (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey) {
          const now = Date.now();
          typed = now - typedAt > 700 ? event.key.toLowerCase() : typed + event.key.toLowerCase();
          typedAt = now;
          const hit = options.find((o) => (o.dataset.label || o.textContent).trim().toLowerCase().startsWith(typed));
          if (hit) setActive(picker, hit);
          break;
        }
        return;
    }
    event.preventDefault();
  });
})();
