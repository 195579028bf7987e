// Building the page from data. Every text a tenant or a recipient wrote (subjects, payloads,
// headers, provider errors) goes in through textContent, never as markup: h() has no way to
// insert HTML at all.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === "class") {
      element.className = value;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

// A table wider than a narrow screen scrolls inside its own box (style.css). Without a link or a
// button in it, the keyboard could not reach what lies beyond its edge: such a table takes the focus
// itself, and the arrow keys scroll it.
export function focusableScrollers(root) {
  for (const table of root.querySelectorAll("table")) {
    if (table.scrollWidth > table.clientWidth) table.tabIndex = 0;
  }
}

const SVG = "http://www.w3.org/2000/svg";

export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
}

// Every time with its zone (the browser's, e.g. "Dec 4, 2026, 19:05:12 GMT+1"): a time without
// one reads as UTC next to a UTC day.
export function when(iso) {
  if (!iso) return "—";
  return new Date(iso).toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
  });
}

// The browser's time zone, by name (what date and time inputs use).
export function zoneName() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
}

// Every count the console shows, written the one way the reader's locale groups digits.
export function number(value) {
  return new Intl.NumberFormat().format(value);
}

// A price in a currency's minor units (cents, kobo), as the reader's locale writes that currency.
export function money(amount, currency) {
  const format = new Intl.NumberFormat(undefined, { style: "currency", currency });
  return format.format(amount / 10 ** format.resolvedOptions().maximumFractionDigits);
}

export function day(iso) {
  return new Date(`${iso}T00:00:00Z`).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
}

let toastTimer;

export function toast(message, kind = "info") {
  const box = document.getElementById("toast");
  box.className = `toast toast-${kind} toast-shown`;
  box.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("toast-shown"), 6000);
}

export function copyButton(value, label) {
  return h("button", {
    type: "button",
    class: "button button-small",
    "aria-label": `Copy ${label}`,
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(value);
        toast(`${label} copied`);
      } catch {
        toast("Copying needs clipboard access; select the text instead.", "error");
      }
    },
  }, "Copy");
}

export function badge(status) {
  return h("span", { class: `badge badge-${status}` }, status);
}

// Name / value rows; a row without a value is left out.
export function facts(rows) {
  return h("dl", { class: "facts" }, rows.filter(([, value]) => value !== undefined && value !== null && value !== "").map(([name, value]) =>
    [h("dt", {}, name), h("dd", {}, value)]));
}

export function field(label, input, hint) {
  const id = input.id || `field-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    input,
    hint ? h("p", { class: "hint" }, hint) : null);
}

// A value shown once (a new API key or signing secret): readable, selectable and copyable.
export function secretOnce(title, value, note) {
  return h("section", { class: "once", "aria-label": title },
    h("h3", {}, title),
    h("p", {}, note),
    h("div", { class: "once-value" }, h("code", { "data-secret": "" }, value), copyButton(value, title)));
}
