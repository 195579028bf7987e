// The signing secret (a new value shown once), suppressions and unsubscribes, webhook endpoints, and
// billing.
import { api } from "./api.js";
import { badge, field, h, money, number, replace, secretOnce, when } from "./dom.js";
import { act, currentAccount, go, link, refreshAccount, rerender } from "./app.js";
import { may, refusal } from "./access.js";
import { listed, supportedProviders } from "./sending.js";
import {
  Account, Billing, Checkout, CheckoutRequest, Endpoint, NewSigningSecret, OfferedPlan, PlanPrice, Portal,
  RotatedSigningSecret, SigningSecretStatus, Suppression, SupportedProvider, Unsubscribe, UnsubscribePage,
} from "./fields.js";

// The webhook signing secret's card, on Keys & signing (keys.js): ``revealed`` shows a new value once.
export function signingCard(status, revealed) {
  const previous = status[SigningSecretStatus.previousValidUntil];
  // After a create or a rotation the card is drawn again from the secret's state (Rotate and
  // Delete instead of Create, the previous secret's end), with the new value shown above it.
  const showNew = async (title, created, note) => {
    const fresh = await api("GET", "/account/webhook-secret");
    card.replaceWith(signingCard(fresh, revealed));
    replace(revealed, secretOnce(title, created[NewSigningSecret.secret], note));
    revealed.querySelector("button")?.focus();
  };
  const create = h("button", {
    type: "button",
    class: "button button-primary",
    onclick: async () => {
      const created = await act(() => api("POST", "/account/webhook-secret"), "Signing secret created");
      if (created) await showNew("Your signing secret", created, "Shown this once. Webhooks are signed with it from now on.");
    },
  }, "Create signing secret");
  const rotate = h("button", {
    type: "button",
    class: "button",
    onclick: async () => {
      const rotated = await act(() => api("POST", "/account/webhook-secret/rotate"), "Signing secret rotated");
      if (rotated) await showNew("Your new signing secret", rotated, `Shown this once. Both secrets sign until ${when(rotated[RotatedSigningSecret.previousValidUntil])}.`);
    },
  }, "Rotate");
  const remove = h("button", {
    type: "button",
    class: "button button-danger",
    onclick: async () => {
      if (!confirm("Delete the signing secret? Webhooks go out unsigned from now on.")) return;
      if (await act(() => api("DELETE", "/account/webhook-secret"), "Signing secret deleted")) rerender();
    },
  }, "Delete");
  const card = h("section", { class: "card", "aria-labelledby": "signing-title" },
    h("h2", { id: "signing-title" }, "Webhook signing secret"),
    status[SigningSecretStatus.hasSecret]
      ? h("p", {}, `Set since ${when(status[SigningSecretStatus.createdAt])}.`, previous ? ` The previous one still signs until ${when(previous)}.` : "")
      : h("p", { class: "muted" }, "No secret: webhooks are sent unsigned."),
    may("settings")
      ? h("div", { class: "actions" }, status[SigningSecretStatus.hasSecret] ? [rotate, remove] : create)
      : h("p", { class: "muted", "data-refused": "" }, refusal("settings")));
  return card;
}

export async function suppressionsPage() {
  const topic = new URLSearchParams(location.search).get("topic") || "";
  const query = new URLSearchParams(topic ? { topic } : {});
  const [entries, unsubscribes] = await Promise.all([
    api("GET", "/account/suppressions"), api("GET", `/account/unsubscribes?${query}`)]);
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Suppressions"),
      h("p", { class: "muted" }, "Addresses that hard-bounced or complained. Herald fails emails to them at once instead of sending.")),
    entries.length
      ? h("table", { class: "table" },
        h("thead", {}, h("tr", {}, ["Address", "Reason", "Source", "Since", ""].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, entries.map(suppressionRow)))
      : h("p", { class: "empty" }, "No suppressed addresses."),
    unsubscribesSection(topic, unsubscribes));
}

// Recipients who unsubscribed from a topic (the one-click link in mail that names one, or a
// provider's unsubscribe, which covers every topic: *). Only mail that names the topic stops.
function unsubscribesSection(topic, page) {
  const entries = page[UnsubscribePage.data];
  const filter = h("input", { type: "search", name: "topic", value: topic, placeholder: "newsletter", pattern: "[a-z0-9._\\-]{1,64}|\\*", autocomplete: "off" });
  const form = h("form", {
    class: "filters",
    role: "search",
    "aria-label": "Filter unsubscribes by topic",
    onsubmit: (event) => {
      event.preventDefault();
      const value = filter.value.trim();
      go(`/console/suppressions${value ? `?${new URLSearchParams({ topic: value })}` : ""}`);
    },
  }, field("Topic", filter), h("button", { type: "submit", class: "button" }, "Filter"));
  return h("section", { class: "card", "aria-labelledby": "unsubscribes-title" },
    h("h2", { id: "unsubscribes-title" }, "Unsubscribes"),
    h("p", { class: "muted" }, "Recipients who unsubscribed from a topic. Emails that name the topic fail instead of being sent; * means every topic (a provider's unsubscribe). Emails without a topic still go."),
    form,
    entries.length
      ? h("table", { class: "table" },
        h("thead", {}, h("tr", {}, ["Address", "Topic", "Source", "Since", ""].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, entries.map(unsubscribeRow)))
      : h("p", { class: "empty" }, topic ? `No unsubscribes from ${topic}.` : "No unsubscribes."),
    page[UnsubscribePage.nextCursor] ? h("p", { class: "muted" }, "More unsubscribes exist: filter by topic to see them.") : null);
}

function unsubscribeRow(entry) {
  const address = entry[Unsubscribe.email];
  const topic = entry[Unsubscribe.topic];
  const source = entry[Unsubscribe.source] === "provider" ? `${entry[Unsubscribe.provider]} unsubscribe` : "One-click link";
  return h("tr", {},
    h("th", { scope: "row" }, address),
    h("td", {}, topic === "*" ? "Every topic" : topic),
    h("td", {}, source),
    h("td", {}, when(entry[Unsubscribe.createdAt])),
    h("td", {}, may("settings") && h("button", {
      type: "button",
      class: "button button-small",
      "aria-label": `Resubscribe ${address} to ${topic}`,
      onclick: async () => {
        const path = `/account/unsubscribes/${encodeURIComponent(address)}?${new URLSearchParams({ topic })}`;
        if (await act(() => api("DELETE", path), `${address} gets ${topic === "*" ? "topic mail" : topic} again`)) rerender();
      },
    }, "Remove")));
}

function suppressionRow(entry) {
  const address = entry[Suppression.email];
  return h("tr", {},
    h("th", { scope: "row" }, address),
    h("td", {}, entry[Suppression.reason]),
    h("td", {}, entry[Suppression.source] || "—"),
    h("td", {}, when(entry[Suppression.createdAt])),
    h("td", {}, may("settings") && h("button", {
      type: "button",
      class: "button button-small",
      "aria-label": `Remove ${address} from the suppression list`,
      onclick: async () => {
        if (await act(() => api("DELETE", `/account/suppressions/${encodeURIComponent(address)}`), `${address} can receive mail again`)) rerender();
      },
    }, "Remove")));
}

const ENDPOINT_STATES = {
  closed: "Delivering normally.",
  open: "Failing: its webhooks wait and one is tried now and then; they go out once it answers again.",
  disabled: "Disabled (by you, or after failing for days): its new webhooks fail at once until you enable it again.",
};

export async function endpointsPage() {
  const entries = await api("GET", "/account/endpoints");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Webhook endpoints"),
      h("p", { class: "muted" }, "The receivers of your webhooks that ever failed, by origin, as Herald's circuit breakers see them.")),
    entries.length
      ? h("table", { class: "table" },
        h("thead", {}, h("tr", {}, ["Origin", "State", "Since", "Last error", ""].map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, entries.map(endpointRow)))
      : h("p", { class: "empty" }, "No endpoint has failed yet."));
}

function endpointRow(entry) {
  const [origin, state] = [entry[Endpoint.origin], entry[Endpoint.state]];
  return h("tr", {},
    h("th", { scope: "row" }, h("code", {}, origin)),
    h("td", { title: ENDPOINT_STATES[state] || "" }, badge(state)),
    h("td", {}, when(entry[Endpoint.since])),
    h("td", { class: "error-text" }, entry[Endpoint.lastError] || ""),
    h("td", {}, h("div", { class: "actions" },
      state === "closed" ? null : endpointButton(origin, "enable", `${origin} is enabled again`),
      state === "disabled" ? null : endpointButton(origin, "disable", `${origin} is disabled: its webhooks fail until you enable it`))));
}

function endpointButton(origin, action, done) {
  const label = action === "enable" ? "Enable" : "Disable";
  return h("button", {
    type: "button",
    class: `button button-small${action === "disable" ? " button-danger" : ""}`,
    "aria-label": `${label} ${origin}`,
    onclick: async () => {
      if (action === "disable" && !confirm(`Disable ${origin}? Its webhooks fail at once until you enable it again.`)) return;
      if (await act(() => api("POST", `/account/endpoints/${encodeURIComponent(origin.split("://")[1])}/${action}`), done)) rerender();
    },
  }, label);
}

const PROCESSORS = { polar: "Card (Polar)", paystack: "Card or bank (Paystack)" };

export async function billingPage() {
  const query = new URLSearchParams(location.search);
  const [account, plans, vendors] = await Promise.all([
    query.has("checkout") ? refreshAccount() : currentAccount(),
    api("GET", "/account/plans"),
    supportedProviders(),
  ]);
  const returned = query.get("checkout");
  const billing = account[Account.billing];
  const plan = account[Account.plan];
  const paying = billing[Billing.status] !== null;
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Billing")),
    returned === "done" ? h("p", { class: "message message-success", role: "status" },
      paying ? "Thank you: the payment went through and your plan is active." : "Thank you: the payment is being confirmed; the plan changes as soon as the processor tells Herald.") : null,
    returned === "cancelled" ? h("p", { class: "message message-info", role: "status" }, "The checkout was cancelled; nothing was charged.") : null,
    h("section", { class: "card", "aria-labelledby": "plan-title" },
      h("h2", { id: "plan-title" }, "Current plan"),
      h("dl", { class: "facts" },
        h("dt", {}, "Plan"), h("dd", { "data-plan": plan }, title(plan)),
        h("dt", {}, "Payment status"), h("dd", {}, billing[Billing.status] || "not paying"),
        h("dt", {}, "Paid until"), h("dd", { "data-paid-until": "" }, when(billing[Billing.paidUntil])),
        h("dt", {}, "This period"), h("dd", { "data-period": "" }, `${when(account[Account.periodStart])} – ${when(account[Account.periodEnd])}`)),
      paying ? h("div", { class: "actions" }, portalButton("Manage the subscription")) : null),
    h("div", { class: "plans" }, plans.map((offered) => offerCard(offered, paying, ownAlready(plans) ? null : vendors))));
}

// Whether the account's plan sends through its own providers already (then it has heard of them).
function ownAlready(plans) {
  return plans.some((offered) => offered[OfferedPlan.change] === "current" && offered[OfferedPlan.ownProviders]);
}

function title(plan) {
  return plan[0].toUpperCase() + plan.slice(1);
}

// What a plan allows, in the words the overview uses, from the plans answer.
function allowance(offered) {
  const quota = offered[OfferedPlan.monthlyQuota];
  const webhooks = offered[OfferedPlan.monthlyWebhooks];
  return [
    `${number(offered[OfferedPlan.requestsPerMinute])} requests a minute`,
    quota !== null ? `${number(quota)} emails and webhooks a month` : `${number(webhooks)} webhooks a month`,
    offered[OfferedPlan.ownProviders] ? "emails unmetered, through your own providers with fallback" : "emails through Herald's own sender",
    `jobs kept ${number(offered[OfferedPlan.retentionDays])} days`,
  ];
}

// ``vendors``: the providers to name beside an upgrade to a plan that needs one; null: no note.
function offerCard(offered, paying, vendors) {
  const plan = offered[OfferedPlan.plan];
  const change = offered[OfferedPlan.change];
  const prices = offered[OfferedPlan.prices];
  return h("section", { class: `card plan-card${change === "current" ? " plan-current" : ""}`, "aria-labelledby": `plan-${plan}`, "data-offer": plan },
    h("h2", { id: `plan-${plan}` }, title(plan)),
    h("p", { class: "plan-price" }, prices.length
      ? prices.map((price) => money(price[PlanPrice.amount], price[PlanPrice.currency])).join(" or ") + " a month"
      : "Free"),
    h("ul", { class: "plan-limits" }, allowance(offered).map((line) => h("li", {}, line))),
    vendors && offered[OfferedPlan.ownProviders] && change === "upgrade" ? providerNote(vendors) : null,
    offerAction(offered, change, paying));
}

// Decided in docs/console.md: paid plans send through the tenant's own providers only, so the
// upgrade says so before the checkout.
function providerNote(vendors) {
  const names = listed(vendors.map((vendor) => vendor[SupportedProvider.label]));
  return h("p", { class: "message message-info", "data-provider-note": "" },
    `This plan sends email through your own provider (${names}), not Herald's sender: add one on `,
    link("/console/providers", "Providers"), " once the plan is active. Until then emails are refused; webhooks work at once.");
}

function offerAction(offered, change, paying) {
  const plan = offered[OfferedPlan.plan];
  if (change === "current") return h("p", { class: "muted" }, "Your plan.");
  if (paying) return portalButton(change === "upgrade" ? `Upgrade to ${title(plan)} in the customer portal` : `Downgrade to ${title(plan)} in the customer portal`);
  if (change === "downgrade") return h("p", { class: "muted" }, "A smaller plan than yours.");
  return checkoutForm(plan, offered[OfferedPlan.prices]);
}

function checkoutForm(plan, prices) {
  const processor = h("select", { name: "processor" }, prices.map((price) => {
    const value = price[PlanPrice.processor];
    return h("option", { value }, `${PROCESSORS[value] || value}: ${money(price[PlanPrice.amount], price[PlanPrice.currency])}`);
  }));
  const submit = h("button", { type: "submit", class: "button button-primary" }, `Upgrade to ${title(plan)}`);
  return h("form", {
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const checkout = await act(() => api("POST", "/account/checkout", { [CheckoutRequest.plan]: plan, [CheckoutRequest.processor]: processor.value }));
      submit.disabled = false;
      if (checkout) location.assign(checkout[Checkout.url]);
    },
  }, field("Pay with", processor), submit);
}

// A paying account changes or cancels its plan at the processor, in the customer portal.
function portalButton(label) {
  return h("button", {
    type: "button",
    class: "button",
    onclick: async () => {
      const portal = await act(() => api("POST", "/account/billing/portal"));
      if (portal) location.assign(portal[Portal.url]);
    },
  }, label);
}
