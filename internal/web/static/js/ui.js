// ui.js: dialogs and toasts (placeholder)
