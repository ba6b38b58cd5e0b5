import { describe, expect, it } from 'vitest'
import {
  camelCase,
  capitalize,
  pascalCase,
  spacedWords,
  splitWords,
} from '../../src/db/models/inflect.ts'

/** The case helpers every name-writer shares (OpenAPI summaries, the client, the scaffold). */
describe('the inflector’s case helpers', () => {
  it.each([
    ['blog_posts', 'blog posts', 'BlogPosts', 'blogPosts'],
    ['BlogPost', 'blog post', 'BlogPost', 'blogPost'],
    ['blogPosts', 'blog posts', 'BlogPosts', 'blogPosts'],
    ['blog-posts', 'blog posts', 'BlogPosts', 'blogPosts'],
    ['api_keys', 'api keys', 'ApiKeys', 'apiKeys'],
    ['HTMLPages', 'html pages', 'HtmlPages', 'htmlPages'],
    [
      'get /api/v1/posts/ id /stats',
      'get api v1 posts id stats',
      'GetApiV1PostsIdStats',
      'getApiV1PostsIdStats',
    ],
    ['posts', 'posts', 'Posts', 'posts'],
    ['', '', '', ''],
  ])('%s → "%s", %s, %s', (name, spaced, pascal, camel) => {
    expect(spacedWords(name)).toBe(spaced)
    expect(pascalCase(name)).toBe(pascal)
    expect(camelCase(name)).toBe(camel)
    expect(splitWords(name).join(' ')).toBe(spaced)
  })

  it('capitalize changes the first letter only', () => {
    expect(capitalize('list blog posts')).toBe('List blog posts')
    expect(capitalize('eTag')).toBe('ETag')
    expect(capitalize('')).toBe('')
  })
})
