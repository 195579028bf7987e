"""The payment processors' checkouts (Polar, Paystack) and the page that pays them."""
