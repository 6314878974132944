import { buildCatalogue, type Catalogue } from './catalogue';
import { catalogueSchema } from './schema';

/**
 * Validates raw catalogue data (any source: a file, a test's variant) with `catalogueSchema`, then
 * builds it. The built-in catalogue skips this at load; test/catalogue runs it over `CATALOGUE_DATA`.
 * @throws ZodError when the data fails the schema; Error from {@link buildCatalogue} for a duplicate
 *   id or a bad equivalent.
 */
export function loadCatalogue(data: unknown): Catalogue {
  return buildCatalogue(catalogueSchema.parse(data));
}
