/** A Map or a WeakMap: what `mapEntry` reads and fills. */
interface KeyedStore<K, V> {
  get(key: K): V | undefined
  set(key: K, value: V): unknown
}

/** The value `map` holds for `key`, made by `create` and kept there the first time it is asked for. */
export function mapEntry<K, V>(map: KeyedStore<K, V>, key: K, create: () => V): V {
  let value = map.get(key)
  if (value === undefined) {
    value = create()
    map.set(key, value)
  }
  return value
}
