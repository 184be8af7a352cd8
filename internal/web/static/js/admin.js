// admin.js: reordering the model list by dragging a row. The up and down
// buttons on each row do the same job from the keyboard and without
// JavaScript; dragging is the quick way for a long move.
(function () {
  "use strict";

  const list = document.querySelector("[data-reorder]");
  if (!list) return;
  let dragged = null;
  let before = []; // the order when the drag began, to put back on cancel

  for (const row of list.querySelectorAll("[data-id]")) {
    row.draggable = true;
    row.classList.add("is-draggable");
  }

  list.addEventListener("dragstart", (event) => {
    dragged = event.target.closest("[data-id]");
    if (!dragged) return;
    dragged.classList.add("is-dragging");
    before = Array.from(list.querySelectorAll("[data-id]"));
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", dragged.dataset.id);
  });

  list.addEventListener("dragover", (event) => {
    if (!dragged) return;
    // Every dragover inside the list accepts the drop, including over the
    // dragged row itself (where it sits once moved); otherwise the browser
    // treats the drop as refused.
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    const over = event.target.closest("[data-id]");
    if (!over || over === dragged) return;
    const box = over.getBoundingClientRect();
    const after = event.clientY > box.top + box.height / 2;
    list.insertBefore(dragged, after ? over.nextSibling : over);
  });

  list.addEventListener("drop", (event) => {
    if (dragged) event.preventDefault();
  });

  list.addEventListener("dragend", async (event) => {
    if (!dragged) return;
    dragged.classList.remove("is-dragging");
    dragged = null;
    if (event.dataTransfer.dropEffect === "none") {
      // Cancelled (Escape, or let go outside the list): put the rows back.
      for (const row of before) list.appendChild(row);
      return;
    }
    const body = new URLSearchParams();
    for (const row of list.querySelectorAll("[data-id]")) body.append("id", row.dataset.id);
    try {
      const res = await fetch(list.dataset.reorder, {
        method: "POST",
        body,
        headers: { "HX-Request": "true" },
        credentials: "same-origin",
      });
      const text = await res.text();
      if (!res.ok) throw new Error(text);
      if (window.lembas) window.lembas.notify("Order saved.", "success");
    } catch (err) {
      if (window.lembas) window.lembas.notify("The new order could not be saved. " + (err.message || ""), "error");
    }
  });
})();
