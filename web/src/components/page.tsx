import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useTitle } from '../hooks';

/**
 * A signed-in page: its heading (focused when the page opens, so keyboard and screen-reader users
 * land on the new content), a one-line description, optional actions, then the content.
 */
export function Page({
  title,
  description,
  actions,
  children,
}: {
  title: string;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  useTitle(title);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus({ preventScroll: true }), []);
  return (
    <>
      <div class="page-header">
        <div>
          <h1 id="page-title" tabIndex={-1} ref={heading}>
            {title}
          </h1>
          {description && <p class="page-description">{description}</p>}
        </div>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}
