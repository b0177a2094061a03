// @graphql-codegen's settings: the client preset types every operation of the shared documents
// (examples/clients/graphql/*.graphql) against the SDL, into generated/graphql/.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../../../schema/schema.graphql",
  documents: ["../graphql/*.graphql"],
  generates: {
    "generated/graphql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },  // a legal action read through a fragment is a plain object
      config: {
        emitLegacyCommonJSImports: false,  // imports with .js, as Node's ES modules want them
        documentMode: "string",      // operations as typed strings: sent with fetch and graphql-ws as they are
        enumsAsTypes: true,          // string unions rather than TypeScript enums
        useTypeImports: true,
        strictScalars: true,
        scalars: { JSON: "unknown" },
      },
    },
  },
};
export default config;
