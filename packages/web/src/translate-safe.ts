// Chrome's page translator replaces text nodes with <font> elements; when React
// later removes or inserts beside a node it rendered, that node is no longer
// where React left it and React throws ("Failed to execute 'removeChild'"),
// blanking the page. Text that changes is wrapped in its own element
// throughout the app; this is the second guard, the one React's issue #11538
// recommends: removing a node that moved is a no-op, inserting before one that
// moved appends. Nothing else changes.
export function guardAgainstPageTranslators(): void {
  if (typeof Node !== 'function' || !Node.prototype) return;
  const removeChild = Node.prototype.removeChild;
  Node.prototype.removeChild = function <T extends Node>(this: Node, child: T): T {
    if (child.parentNode !== this) {
      // Already moved by a translator: React's view of the tree is still right.
      child.parentNode?.removeChild(child);
      return child;
    }
    return removeChild.call(this, child) as T;
  };
  const insertBefore = Node.prototype.insertBefore;
  Node.prototype.insertBefore = function <T extends Node>(this: Node, node: T, ref: Node | null): T {
    if (ref && ref.parentNode !== this) return insertBefore.call(this, node, null) as T;
    return insertBefore.call(this, node, ref) as T;
  };
}
