// The Herald console: one page, routed by its path under /console.
import { api, ApiError, signedOut } from "./api.js";
import { focusableScrollers, h, replace, toast } from "./dom.js";
import { Account, ConsoleAccount, SwitchAccountRequest } from "./fields.js";
import { currentRole, knownAccounts, loadAccounts } from "./access.js";
import { signInPage } from "./signin.js";
import { overviewPage } from "./overview.js";
import { jobsPage } from "./jobs.js";
import { jobPage } from "./job.js";
import { providersPage, domainsPage } from "./sending.js";
import { suppressionsPage, endpointsPage, billingPage } from "./account.js";
import { keysPage } from "./keys.js";
import { membersPage, auditPage } from "./team.js";
import { templatesPage, templatePage } from "./templates.js";
import { eventTypesPage, eventTypePage } from "./eventtypes.js";
import { subscriptionsPage, subscriptionPage } from "./subscriptions.js";
import { eventsPage, eventPage } from "./events.js";

const NAV = [
  ["Overview", "/console"],
  ["Jobs", "/console/jobs"],
  ["Providers", "/console/providers"],
  ["Domains", "/console/domains"],
  ["Templates", "/console/templates"],
  ["Event types", "/console/event-types"],
  ["Subscriptions", "/console/subscriptions"],
  ["Events", "/console/events"],
  ["Keys & signing", "/console/keys"],
  ["Members", "/console/members"],
  ["Audit log", "/console/audit"],
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
  [/^\/console\/templates\/?$/, templatesPage],
  [/^\/console\/templates\/([^/]+)$/, templatePage],
  [/^\/console\/event-types\/?$/, eventTypesPage],
  [/^\/console\/event-types\/([^/]+)$/, eventTypePage],
  [/^\/console\/subscriptions\/?$/, subscriptionsPage],
  [/^\/console\/subscriptions\/([^/]+)$/, subscriptionPage],
  [/^\/console\/events\/?$/, eventsPage],
  [/^\/console\/events\/([^/]+)$/, eventPage],
  [/^\/console\/keys\/?$/, keysPage],
  [/^\/console\/members\/?$/, membersPage],
  [/^\/console\/audit\/?$/, auditPage],
  [/^\/console\/suppressions\/?$/, suppressionsPage],
  [/^\/console\/endpoints\/?$/, endpointsPage],
  [/^\/console\/billing\/?$/, billingPage],
];

let account = null;
// The first render after the page loaded leaves the focus where the browser put it, so that the
// first Tab reaches "Skip to content"; every later page change moves it (settleFocus).
let landed = false;

export function go(path) {
  history.pushState({}, "", path);
  render(true);
}

// Links inside the console navigate without a reload.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-route]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  go(link.getAttribute("href"));
});
window.addEventListener("popstate", () => render(true));

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
        currentRole() ? h("p", { class: "nav-role", "data-role": currentRole() }, `Your role: ${currentRole()}`) : null,
        switcher(),
        h("button", { type: "button", class: "button button-quiet", onclick: signOut }, "Sign out"))));
  const app = document.getElementById("app");
  const frame = h("main", { id: "main", class: "main", tabindex: "-1" }, sendingPaused(), main);
  replace(app, nav, frame);
  return frame;
}

// On every page while SES keeps a free account's mail paused: its emails fail until the operator
// resumes it (GET /account reads the state from SES each time the console loads the account).
function sendingPaused() {
  if (account[Account.platformSending] !== "paused") return null;
  return h("section", { class: "card notice notice-strong", role: "alert", "data-notice": "sending-paused" },
    h("h2", {}, "Email sending is paused"),
    h("p", {}, "Herald's mail service paused this account's emails after too many bounces or complaints. ",
      "Until it is resumed, emails fail with sending_paused; webhooks go out as usual. ",
      "Check the addresses you send to, then ask Herald's support to resume sending."));
}

// The person's other accounts (hidden with only one): switching sets a new session cookie for the
// chosen account, and the console reads everything again.
function switcher() {
  const accounts = knownAccounts();
  if (accounts.length < 2) return null;
  const chooser = h("select", { id: "account-switch", name: "account" }, accounts.map((entry) => h("option", {
    value: entry[ConsoleAccount.tenantId], selected: entry[ConsoleAccount.current],
  }, `${entry[ConsoleAccount.name]} (${entry[ConsoleAccount.role]})`)));
  const submit = h("button", { type: "submit", class: "button button-quiet button-small" }, "Switch");
  return h("form", {
    class: "switcher",
    onsubmit: async (event) => {
      event.preventDefault();
      const chosen = accounts.find((entry) => entry[ConsoleAccount.tenantId] === chooser.value);
      if (!chosen || chosen[ConsoleAccount.current]) return;
      let switched = false;
      submit.disabled = true;
      await act(async () => {
        await api("POST", "/console/switch", { [SwitchAccountRequest.tenantId]: chosen[ConsoleAccount.tenantId] });
        switched = true;
      }, `Switched to ${chosen[ConsoleAccount.name]}`);
      submit.disabled = false;
      if (!switched) return;
      await refreshAccount();
      // A job belongs to the account it was sent from: after a switch, the jobs list instead.
      go(/^\/console\/jobs\/[^/]+/.test(location.pathname) ? "/console/jobs" : location.pathname + location.search);
    },
  }, h("label", { for: "account-switch", class: "nav-label" }, "Switch account"), chooser, submit);
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
    localStorage.removeItem(SIGNED_IN);
    go("/console/signin");
  }
}

// Whether this browser signed in and has not signed out since: without it, a first visit goes to
// the sign-in page at once instead of asking the API for an account and being refused (401).
// Not a credential (the session cookie is, and scripts cannot read it); only spares that request.
const SIGNED_IN = "herald.signedIn";
const maybeSignedIn = () => localStorage.getItem(SIGNED_IN) === "1";

// Signed out (or never signed in): to the sign-in page, which brings the person back here after.
// The address is replaced, so Back does not return to a page that would send them here again.
function toSignIn() {
  account = null;
  localStorage.removeItem(SIGNED_IN);
  const here = location.pathname + location.search + location.hash;
  const next = here === "/console" ? "" : `?next=${encodeURIComponent(here)}`;
  history.replaceState({}, "", `/console/signin${next}`);
}

// Where a sign-in goes: the console page first asked for, never a page of another origin
// ("//evil.example" and absolute URLs resolve elsewhere and are refused).
function pageAfterSignIn(asked, origin) {
  if (!asked) return "/console";
  let url;
  try {
    url = new URL(asked, origin);
  } catch {
    return "/console";
  }
  const inConsole = /^\/console(\/|$)/.test(url.pathname) && !/^\/console\/sign(in|up)/.test(url.pathname);
  return asked.startsWith("/") && url.origin === origin && inConsole ? url.pathname + url.search + url.hash : "/console";
}

// A new page is announced by its heading (screen readers read what takes the focus); an action
// that drew the page again never leaves the focus on the body.
function settleFocus(moved) {
  if (!landed) {
    landed = true;
    return;
  }
  const focused = document.activeElement;
  if (!moved && focused && focused !== document.body && focused.isConnected) return;
  const main = document.getElementById("main");
  const heading = main?.querySelector("h1");
  if (heading) heading.setAttribute("tabindex", "-1");
  (heading || main)?.focus();
}

export async function refreshAccount() {
  [account] = await Promise.all([api("GET", "/account"), loadAccounts()]);
  localStorage.setItem(SIGNED_IN, "1");
  return account;
}

export function currentAccount() {
  return account;
}

async function render(moved = false) {
  await draw();
  settleFocus(moved);
}

async function draw() {
  const path = location.pathname;
  if (path.startsWith("/console/signin") || path.startsWith("/console/signup")) {
    const next = new URLSearchParams(location.search).get("next");
    replace(document.getElementById("app"), h("main", { id: "main", class: "main main-center", tabindex: "-1" },
      signInPage(path.startsWith("/console/signup") ? "signup" : "signin", async () => {
        await refreshAccount();
        go(pageAfterSignIn(next, location.origin));
      })));
    return;
  }
  if (!account && !maybeSignedIn()) return signInInstead();
  try {
    if (!account) await refreshAccount();
  } catch (error) {
    if (signedOut(error)) return signInInstead();
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
    if (signedOut(error)) return signInInstead();
    showError(frame, error);
  }
}

function signInInstead() {
  toSignIn();
  return draw();
}

function showError(frame, error) {
  const message = error instanceof ApiError ? error.message : "Something went wrong in the console.";
  replace(frame, h("div", { class: "error-page", role: "alert" }, h("h1", {}, "This page could not be shown"), h("p", {}, message)));
}

// After an action: tell the person, and show the page again as the API now sees it. With ``where``,
// a refusal's sentence also stays there, beside the form that asked (and goes with the next success).
export async function act(work, done, where) {
  try {
    const result = await work();
    if (done) toast(done, "success");
    if (where) replace(where);
    return result;
  } catch (error) {
    if (signedOut(error)) {
      toSignIn();
      render(true);
      return undefined;
    }
    const message = error instanceof ApiError ? error.message : "The action failed.";
    toast(message, "error");
    if (where) replace(where, h("p", { class: "form-error", role: "alert" }, message));
    return undefined;
  }
}

export const rerender = () => render();

render();
