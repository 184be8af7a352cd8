// app.js: behaviour of the app shell that HTML cannot express: applying a
// theme at once, and the sidebar drawer on small screens.
(function () {
  "use strict";

  const root = document.documentElement;

  // Theme forms: apply the chosen theme immediately, then store it. The
  // form still works without JavaScript (it posts and redirects back).
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-theme-form")) return;
    event.preventDefault();
    const data = new FormData(form);
    const theme = data.get("theme");
    if (!theme) return;
    const previous = root.dataset.theme;
    applyTheme(String(theme));
    try {
      const res = await fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(data),
        headers: { "HX-Request": "true" },
        credentials: "same-origin",
      });
      const text = await res.text();
      if (!res.ok) throw new Error(text);
    } catch (err) {
      applyTheme(previous);
      if (window.lembas) window.lembas.notify("The theme could not be saved. " + (err.message || ""), "error");
    }
  });

  function applyTheme(theme) {
    root.dataset.theme = theme;
    // Keep every theme control in line with the theme now in force.
    const next = theme === "shire" ? "moria" : "shire";
    for (const button of document.querySelectorAll("[data-next-theme]")) {
      button.dataset.nextTheme = next;
      const input = button.form && button.form.querySelector("input[name=theme]");
      if (input) input.value = next;
      const label = button.querySelector(".theme-label");
      if (label) label.textContent = next === "shire" ? "Light theme" : "Dark theme";
    }
    for (const radio of document.querySelectorAll("input[type=radio][name=theme]")) {
      radio.checked = radio.value === theme;
    }
    document.dispatchEvent(new CustomEvent("lembas:theme", { detail: { theme } }));
  }

  // The sidebar becomes a drawer on small screens.
  const app = document.getElementById("app");
  function setDrawer(open) {
    if (!app) return;
    app.classList.toggle("drawer-open", open);
    for (const b of document.querySelectorAll("[data-action=open-sidebar]")) {
      b.setAttribute("aria-expanded", String(open));
    }
    if (open) {
      const first = document.querySelector("#sidebar a, #sidebar button");
      if (first) first.focus();
    }
  }
  document.addEventListener("click", (event) => {
    const el = event.target.closest("[data-action]");
    if (!el) return;
    if (el.dataset.action === "open-sidebar") setDrawer(true);
    if (el.dataset.action === "close-sidebar") setDrawer(false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && app && app.classList.contains("drawer-open")) setDrawer(false);
  });
})();

// Installable: the worker caches the shell and the offline page. It is
// served from /sw.js so that its scope is the whole site.
if ("serviceWorker" in navigator && window.isSecureContext) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js").catch(() => {
      // Not fatal: the app works without it, only offline is lost.
    });
  });
}

// Time zones: a person who has not chosen one gets this browser's, stored
// once; the preferences form offers the browser's list of zones.
(function () {
  "use strict";
  let zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (_) {
    return;
  }
  if (zone && document.body.hasAttribute("data-zone-unset")) {
    document.body.removeAttribute("data-zone-unset");
    fetch("/settings/preferences", {
      method: "POST",
      body: new URLSearchParams({ timezone: zone }),
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    }).then((res) => res.text()).catch(() => {});
  }
  const list = document.querySelector("[data-time-zone-list]");
  if (list && typeof Intl.supportedValuesOf === "function") {
    for (const name of Intl.supportedValuesOf("timeZone")) {
      const option = document.createElement("option");
      option.value = name;
      list.appendChild(option);
    }
  }
  const input = document.querySelector("input[data-time-zone]");
  if (input && !input.value && zone) input.placeholder = zone;
})();
