"""Amazon API Gateway, HTTP APIs: the template's routes selected as API Gateway selects them
(``routes``), the payload 2.0 event of a request and the response made of a function's answer
(``events``), and the HTTP server on loopback that invokes each route's function (``gateway``)."""
