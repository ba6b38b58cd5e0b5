/**
 * A small English inflector for table and model names: the common Rails/Laravel rules, the
 * usual irregular words and a few uncountable ones. Words are handled in lower case.
 */

type Rule = [pattern: RegExp, replacement: string]

const UNCOUNTABLE = new Set([
  'equipment',
  'information',
  'rice',
  'money',
  'species',
  'series',
  'fish',
  'sheep',
  'deer',
  'news',
  'data',
  'metadata',
  'media',
  'feedback',
  'staff',
  'software',
  'hardware',
  'traffic',
  'audio',
  'evidence',
])

/** singular → plural */
const IRREGULAR: Record<string, string> = {
  person: 'people',
  man: 'men',
  woman: 'women',
  child: 'children',
  mouse: 'mice',
  goose: 'geese',
  foot: 'feet',
  tooth: 'teeth',
  ox: 'oxen',
  criterion: 'criteria',
  // -f/-fe nouns ending in -ves (a rule would break `reserves`, `archives`, `safes`).
  leaf: 'leaves',
  knife: 'knives',
  wife: 'wives',
  life: 'lives',
  half: 'halves',
  shelf: 'shelves',
  wolf: 'wolves',
  thief: 'thieves',
  self: 'selves',
  calf: 'calves',
}

const IRREGULAR_PLURAL = new Map(Object.entries(IRREGULAR).map(([one, many]) => [many, one]))

/** The first matching rule wins. */
const PLURAL_RULES: Rule[] = [
  [/(quiz)$/, '$1zes'],
  [/(matr|vert)(?:ix|ex)$/, '$1ices'],
  [/(x|ch|ss|sh|zz)$/, '$1es'],
  [/([^aeiouy]|qu)y$/, '$1ies'],
  [/(alias|status|campus|virus|bonus|^bus)$/, '$1es'],
  [/(octop)us$/, '$1i'],
  [/^(ax|test)is$/, '$1es'],
  [/(analy|diagno|parenthe|progno|synop|the|cri)sis$/, '$1ses'],
  [/(buffal|tomat|potat|her|ech|vet)o$/, '$1oes'],
  [/s$/, 's'],
  [/$/, 's'],
]

const SINGULAR_RULES: Rule[] = [
  [/(database)s$/, '$1'],
  [/(quiz)zes$/, '$1'],
  [/(matr)ices$/, '$1ix'],
  [/(vert|ind)ices$/, '$1ex'],
  [/(alias|status|campus|virus|bonus|^bus)(es)?$/, '$1'],
  [/(octop)(us|i)$/, '$1us'],
  [/^(ax|test)[ie]s$/, '$1is'],
  [/(analy|diagno|parenthe|progno|synop|the|cri)s[ie]s$/, '$1sis'],
  [/(buffal|tomat|potat|her|ech|vet)oes$/, '$1o'],
  [/(x|ch|ss|sh|zz)es$/, '$1'],
  [/([^aeiouy]|qu)ies$/, '$1y'],
  [/(ss|us|is)$/, '$1'],
  [/s$/, ''],
]

function applyRules(word: string, rules: Rule[]): string {
  for (const [pattern, replacement] of rules) {
    if (pattern.test(word)) return word.replace(pattern, replacement)
  }
  return word
}

/** `post` → `posts`, `category` → `categories`, `person` → `people`; plural words stay. */
export function pluralize(word: string): string {
  const lower = word.toLowerCase()
  if (lower === '' || UNCOUNTABLE.has(lower)) return lower
  const irregular = IRREGULAR[lower]
  if (irregular) return irregular
  if (IRREGULAR_PLURAL.has(lower)) return lower
  return applyRules(lower, PLURAL_RULES)
}

/** `posts` → `post`, `categories` → `category`, `people` → `person`; singular words stay. */
export function singularize(word: string): string {
  const lower = word.toLowerCase()
  if (lower === '' || UNCOUNTABLE.has(lower)) return lower
  const irregular = IRREGULAR_PLURAL.get(lower)
  if (irregular) return irregular
  if (lower in IRREGULAR) return lower
  return applyRules(lower, SINGULAR_RULES)
}

/** `blog_posts`, `blogPosts`, `BlogPosts`, `blog-posts` → `['blog', 'posts']`. */
export function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase())
}

/** `blog_posts`, `BlogPost` → `blog posts`, `blog post`: a name as the words of a sentence. */
export function spacedWords(name: string): string {
  return splitWords(name).join(' ')
}

/** `post` → `Post`, `list posts` → `List posts`: the first letter upper case, the rest as is. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** `blog_posts`, `blog-posts`, `blogPosts` → `BlogPosts`. */
export function pascalCase(name: string): string {
  return splitWords(name).map(capitalize).join('')
}

/** `blog_posts`, `BlogPosts`, `get /api/v1/posts` → `blogPosts`, `blogPosts`, `getApiV1Posts`. */
export function camelCase(name: string): string {
  const [first = '', ...rest] = splitWords(name)
  return first + rest.map(capitalize).join('')
}

function withLastWord(name: string, inflect: (word: string) => string): string[] {
  const words = splitWords(name)
  const last = words.pop()
  return last === undefined ? words : [...words, inflect(last)]
}

/** The model name of a table: PascalCase singular (`blog_posts` → `BlogPost`, `people` → `Person`). */
export function modelName(tableName: string): string {
  return withLastWord(tableName, singularize).map(capitalize).join('')
}

/**
 * The resource name of a table: plural lowercase snake_case (`post` → `posts`, `BlogPost` →
 * `blog_posts`). A last word that is already plural is kept as written (`indexes`).
 */
export function resourceName(tableName: string): string {
  return withLastWord(tableName, (word) =>
    singularize(word) === word ? pluralize(word) : word,
  ).join('_')
}
