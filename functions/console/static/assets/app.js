// The Herald console: one page, routed by its path under /console.
import { api, ApiError, signedOut } from "./api.js";
import { focusableScrollers, h, replace, toast } from "./dom.js";
import { Account } from "./fields.js";
import { signInPage } from "./signin.js";
import { overviewPage } from "./overview.js";
import { jobsPage } from "./jobs.js";
import { jobPage } from "./job.js";
import { providersPage, domainsPage } from "./sending.js";
import { keysPage, suppressionsPage, endpointsPage, billingPage } from "./account.js";

const NAV = [
  ["Overview", "/console"],
  ["Jobs", "/console/jobs"],
  ["Providers", "/console/providers"],
  ["Domains", "/console/domains"],
  ["Keys & signing", "/console/keys"],
  ["Suppressions", "/console/suppressions"],
  ["Endpoints", "/console/endpoints"],
  ["Billing", "/console/billing"],
];

const ROUTES = [
  [/^\/console\/?$/, overviewPage],
  [/^\/console\/jobs\/?$/, jobsPage],
  [/^\/console\/jobs\/([^/]+)$/, jobPage],
  [/^\/console\/providers\/?$/, providersPage],
  [/^\/console\/domains\/?$/, domainsPage],
  [/^\/console\/keys\/?$/, keysPage],
  [/^\/console\/suppressions\/?$/, suppressionsPage],
  [/^\/console\/endpoints\/?$/, endpointsPage],
  [/^\/console\/billing\/?$/, billingPage],
];

let account = null;

export function go(path) {
  history.pushState({}, "", path);
  render();
}

// Links inside the console navigate without a reload.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-route]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  go(link.getAttribute("href"));
});
window.addEventListener("popstate", () => render());

export function link(path, ...children) {
  return h("a", { href: path, "data-route": "" }, ...children);
}

function shell(main) {
  const here = location.pathname.replace(/\/$/, "") || "/console";
  const current = ([, path]) => (path === "/console" ? here === "/console" : here.startsWith(path));
  // On a narrow screen the links and the account fold behind the Menu button (style.css), so the
  // page's own content starts near the top; on a wide one the button is hidden and they always show.
  const toggle = h("button", {
    type: "button", class: "nav-toggle", "aria-expanded": "false", "aria-controls": "nav-menu",
    onclick: () => showMenu(toggle, toggle.getAttribute("aria-expanded") !== "true"),
  }, h("span", { class: "nav-toggle-icon", "aria-hidden": "true" }), "Menu");
  const nav = h("nav", { class: "nav", "aria-label": "Console", onkeydown: (event) => closeMenu(event, toggle) },
    h("div", { class: "nav-bar" },
      h("div", { class: "brand" }, h("span", { class: "brand-mark", "aria-hidden": "true" }, "H"), "Herald"),
      toggle),
    h("div", { id: "nav-menu", class: "nav-menu" },
      h("ul", {}, NAV.map((item) => h("li", {},
        h("a", { href: item[1], "data-route": "", "aria-current": current(item) ? "page" : false }, item[0])))),
      h("div", { class: "nav-account" },
        h("p", { class: "nav-name" }, account[Account.name]),
        h("p", { class: "nav-email" }, account[Account.email]),
        h("span", { class: `plan plan-${account[Account.plan]}` }, account[Account.plan]),
        h("button", { type: "button", class: "button button-quiet", onclick: signOut }, "Sign out"))));
  const app = document.getElementById("app");
  const frame = h("main", { id: "main", class: "main", tabindex: "-1" }, main);
  replace(app, nav, frame);
  return frame;
}

function showMenu(toggle, open) {
  toggle.setAttribute("aria-expanded", String(open));
  document.getElementById(toggle.getAttribute("aria-controls")).classList.toggle("nav-menu-open", open);
}

// Escape folds the open menu and gives the focus back to its button, where the person left off.
function closeMenu(event, toggle) {
  if (event.key !== "Escape" || toggle.getAttribute("aria-expanded") !== "true") return;
  showMenu(toggle, false);
  toggle.focus();
}

async function signOut() {
  try {
    await api("POST", "/signout");
  } finally {
    account = null;
    go("/console/signin");
  }
}

export async function refreshAccount() {
  account = await api("GET", "/account");
  return account;
}

export function currentAccount() {
  return account;
}

async function render() {
  const path = location.pathname;
  if (path.startsWith("/console/signin") || path.startsWith("/console/signup")) {
    replace(document.getElementById("app"), h("main", { id: "main", class: "main main-center", tabindex: "-1" },
      signInPage(path.startsWith("/console/signup") ? "signup" : "signin", async () => {
        await refreshAccount();
        go("/console");
      })));
    return;
  }
  try {
    if (!account) await refreshAccount();
  } catch (error) {
    if (signedOut(error)) return go("/console/signin");
    return showError(document.getElementById("main"), error);
  }
  const route = ROUTES.find(([pattern]) => pattern.test(path));
  const frame = shell(h("p", { class: "muted" }, "Loading…"));
  if (!route) {
    replace(frame, h("h1", {}, "Not found"), h("p", {}, "No console page has this address. "), link("/console", "Back to the overview"));
    return;
  }
  const [pattern, page] = route;
  try {
    replace(frame, await page(...path.match(pattern).slice(1).map(decodeURIComponent)));
    focusableScrollers(frame);
    document.title = `${frame.querySelector("h1")?.textContent || "Console"} · Herald`;
  } catch (error) {
    if (signedOut(error)) {
      account = null;
      return go("/console/signin");
    }
    showError(frame, error);
  }
}

function showError(frame, error) {
  const message = error instanceof ApiError ? error.message : "Something went wrong in the console.";
  replace(frame, h("div", { class: "error-page", role: "alert" }, h("h1", {}, "This page could not be shown"), h("p", {}, message)));
}

// After an action: tell the person, and show the page again as the API now sees it.
export async function act(work, done) {
  try {
    const result = await work();
    if (done) toast(done, "success");
    return result;
  } catch (error) {
    if (signedOut(error)) {
      account = null;
      go("/console/signin");
      return undefined;
    }
    toast(error instanceof ApiError ? error.message : "The action failed.", "error");
    return undefined;
  }
}

export const rerender = () => render();

render();
