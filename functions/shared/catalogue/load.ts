import { buildCatalogue, type Catalogue } from './catalogue';
import { aliasesSchema, catalogueSchema } from './schema';

/**
 * Validates raw catalogue data (any source: a file, a test's variant) with `catalogueSchema`, then
 * builds it (with `aliases`, validated with `aliasesSchema`). The built-in catalogue skips this at load
 * (it would cost ~20 ms of cold start, ARCHITECTURE.md "Where to add"); test/catalogue runs it over `CATALOGUE_DATA`.
 * @throws ZodError when the data fails the schema; Error from {@link buildCatalogue} for a duplicate
 *   id or a bad equivalent.
 */
export function loadCatalogue(data: unknown, aliases: unknown = []): Catalogue {
  return buildCatalogue(catalogueSchema.parse(data), aliasesSchema.parse(aliases));
}
