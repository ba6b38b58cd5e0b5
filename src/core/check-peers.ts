// Imported first by every entry point of kiln (kiln, kiln/core, kiln/api, …, the kiln command),
// so a peer outside its range stops the app with one clear message before any module of kiln
// runs code written for the supported versions.
import { assertPeerVersions } from './peer-versions.ts'

assertPeerVersions()
