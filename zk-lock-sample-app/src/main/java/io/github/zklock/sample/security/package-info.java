/**
 * The sample's operator surface secured with Spring Security: who may read the {@code zklocks}
 * endpoint, who may revoke a lock through it, and the rest of Actuator; the business endpoints stay
 * open.
 */
@NullMarked
package io.github.zklock.sample.security;

import org.jspecify.annotations.NullMarked;
