// Types for Prism's per-file modules: the core is the same object as the 'prismjs' bundle (typed by
// @types/prismjs); a language file only adds its grammar to Prism.languages.
declare module 'prismjs/components/prism-core' {
  import Prism from 'prismjs';
  export default Prism;
}
declare module 'prismjs/components/*';
