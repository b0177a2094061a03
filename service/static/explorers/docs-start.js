// Swagger UI over this service's /openapi.yaml. A separate file, not an inline script, so that the
// page's Content-Security-Policy can allow scripts from this origin only.
"use strict";

window.ui = SwaggerUIBundle({
  url: "/openapi.yaml",
  dom_id: "#ui",
  // the default sends the document to validator.swagger.io for a badge: nothing leaves this host
  validatorUrl: null,
  deepLinking: true,
  // seat tokens typed into "Authorize" stay in this tab's memory only
  persistAuthorization: false,
});
