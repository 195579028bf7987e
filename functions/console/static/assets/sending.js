// Providers (keys, their fallback order, inbound webhook URLs) and sending domains (DNS records).
import { api } from "./api.js";
import { badge, copyButton, field, h, when } from "./dom.js";
import { act, currentAccount, link, rerender } from "./app.js";
import { Account, DnsRecord, Domain, DomainAtProvider, DomainRequest, PriorityRequest, Provider, ProviderKeyRequest } from "./fields.js";

const PROVIDERS = ["SENDGRID", "RESEND", "POSTMARK"];
const NAMES = { SENDGRID: "SendGrid", RESEND: "Resend", POSTMARK: "Postmark" };

function freePlanNote(what) {
  return h("section", { class: "card notice" },
    h("h2", {}, `${what} need a paid plan`),
    h("p", {}, "On the free plan Herald sends through its own Amazon SES sender. Upgrade to bring your SendGrid, Resend or Postmark keys, with fallback in the order you choose."),
    link("/console/billing", "See plans"));
}

export async function providersPage() {
  const paid = currentAccount()[Account.plan] !== "free";
  const providers = await api("GET", "/account/providers");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Providers"),
      h("p", { class: "muted" }, "Each attempt tries your providers in this order and stops at the first that accepts.")),
    paid ? null : freePlanNote("Provider keys"),
    providers.length ? providerTable(providers) : h("p", { class: "empty" }, "No provider key yet."),
    paid ? addProviderForm(providers) : null);
}

function providerTable(providers) {
  return h("table", { class: "table" },
    h("caption", { class: "visually-hidden" }, "Configured providers in the order they are tried"),
    h("thead", {}, h("tr", {}, ["Order", "Provider", "Key", "Added", "Inbound webhook URL", "Webhook secret", "Actions"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, providers.map((provider, index) => providerRow(provider, index, providers.length))));
}

function providerRow(provider, index, count) {
  const name = provider[Provider.provider];
  const url = provider[Provider.webhookUrl];
  return h("tr", { "data-provider": name },
    h("td", {}, String(provider[Provider.priority])),
    h("th", { scope: "row" }, NAMES[name] || name),
    h("td", {}, h("code", {}, `••••${provider[Provider.lastFour]}`)),
    h("td", {}, when(provider[Provider.addedAt])),
    h("td", { class: "url-cell" }, h("code", { class: "wrap" }, url), " ", copyButton(url, `${NAMES[name]} webhook URL`)),
    h("td", {}, provider[Provider.hasWebhookSecret] ? badge("set") : badge("missing")),
    h("td", {}, h("div", { class: "actions" },
      index > 0 ? moveButton(provider, -1, "Move up") : null,
      index < count - 1 ? moveButton(provider, 1, "Move down") : null,
      h("button", {
        type: "button",
        class: "button button-small button-danger",
        "aria-label": `Remove ${NAMES[name]}`,
        onclick: async () => {
          if (!confirm(`Remove the ${NAMES[name]} key? Herald stops sending through it at once.`)) return;
          if (await act(() => api("DELETE", `/account/providers/${name}`), `${NAMES[name]} removed`)) rerender();
        },
      }, "Remove"))));
}

function moveButton(provider, by, label) {
  const name = provider[Provider.provider];
  return h("button", {
    type: "button",
    class: "button button-small",
    "aria-label": `${label}: ${NAMES[name]}`,
    onclick: async () => {
      const moved = await act(() => api("PATCH", `/account/providers/${name}`, { [PriorityRequest.priority]: provider[Provider.priority] + by }), "Order changed");
      if (moved) rerender();
    },
  }, by < 0 ? "↑ Up" : "↓ Down");
}

function addProviderForm(providers) {
  const missing = PROVIDERS.filter((name) => !providers.some((provider) => provider[Provider.provider] === name));
  const choice = h("select", { name: "provider" }, PROVIDERS.map((name) => h("option", { value: name, selected: name === missing[0] }, NAMES[name])));
  const apiKey = h("input", { type: "password", name: "apiKey", autocomplete: "off", required: true });
  const accountToken = h("input", { type: "password", name: "accountToken", autocomplete: "off" });
  const secret = h("input", { type: "password", name: "webhookSecret", autocomplete: "off" });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Check and save");
  return h("section", { class: "card", "aria-labelledby": "add-provider" },
    h("h2", { id: "add-provider" }, "Add or replace a key"),
    h("p", { class: "muted" }, "Herald checks the key with the provider before storing it, encrypted; only its last four characters are shown again."),
    h("form", {
      class: "form-grid",
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        const body = { [ProviderKeyRequest.apiKey]: apiKey.value.trim() };
        if (accountToken.value.trim()) body[ProviderKeyRequest.accountToken] = accountToken.value.trim();
        if (secret.value.trim()) body[ProviderKeyRequest.webhookSecret] = secret.value.trim();
        const saved = await act(() => api("PUT", `/account/providers/${choice.value}`, body), `${NAMES[choice.value]} key checked and saved`);
        submit.disabled = false;
        if (saved) rerender();
      },
    },
    field("Provider", choice),
    field("API key (Postmark: server token)", apiKey),
    field("Account token (Postmark, for domains)", accountToken, "Optional"),
    field("Webhook secret", secret, "Optional: verifies the provider's event webhooks (SendGrid: verification key)"),
    submit));
}

export async function domainsPage() {
  const paid = currentAccount()[Account.plan] !== "free";
  const domains = await api("GET", "/account/domains");
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Domains"),
      h("p", { class: "muted" }, "Send from your own domain once its DNS records verify with a provider.")),
    paid ? addDomainForm() : freePlanNote("Sending domains"),
    domains.length ? domains.map(domainCard) : h("p", { class: "empty" }, "No sending domain yet."));
}

function addDomainForm() {
  const name = h("input", { type: "text", name: "domain", placeholder: "mail.example.com", required: true, autocomplete: "off" });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Add domain");
  return h("form", {
    class: "inline-form card",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const added = await act(() => api("POST", "/account/domains", { [DomainRequest.domain]: name.value.trim().toLowerCase() }), "Domain registered with your providers");
      submit.disabled = false;
      if (added) rerender();
    },
  }, field("Domain", name), submit);
}

function domainCard(domain) {
  const name = domain[Domain.domain];
  return h("section", { class: "card", "aria-label": name, "data-domain": name },
    h("div", { class: "card-head" },
      h("h2", {}, name, " ", badge(domain[Domain.verified] ? "verified" : "unverified")),
      h("div", { class: "actions" },
        h("button", {
          type: "button",
          class: "button",
          onclick: async () => {
            const checked = await act(() => api("POST", `/account/domains/${encodeURIComponent(name)}/verify`));
            if (checked) {
              rerender();
            }
          },
        }, "Verify"),
        h("button", {
          type: "button",
          class: "button button-danger",
          onclick: async () => {
            if (!confirm(`Remove ${name} from Herald and your providers?`)) return;
            if (await act(() => api("DELETE", `/account/domains/${encodeURIComponent(name)}`), "Domain removed")) rerender();
          },
        }, "Remove"))),
    domain[Domain.providers].map(atProvider));
}

function atProvider(entry) {
  const [provider, error] = [entry[DomainAtProvider.provider], entry[DomainAtProvider.error]];
  return h("div", { class: "domain-provider" },
    h("h3", {}, NAMES[provider] || provider, " ", badge(entry[DomainAtProvider.verified] ? "verified" : "pending")),
    error ? h("p", { class: "error-text" }, error) : null,
    h("table", { class: "table table-compact" },
      h("thead", {}, h("tr", {}, ["Type", "Host", "Value", ""].map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, entry[DomainAtProvider.records].map(dnsRow))));
}

function dnsRow(record) {
  const [type, host, value, priority] = [record[DnsRecord.type], record[DnsRecord.host], record[DnsRecord.value], record[DnsRecord.priority]];
  return h("tr", {},
    h("td", {}, type.toUpperCase()),
    h("td", {}, h("code", { class: "wrap" }, host), " ", copyButton(host, `${type} host`)),
    h("td", {}, h("code", { class: "wrap" }, value), " ", copyButton(value, `${type} value`)),
    h("td", {}, priority !== null && priority !== undefined ? `priority ${priority}` : ""));
}
