package io.github.zklock.expression;

import java.lang.reflect.Method;
import java.math.BigDecimal;

import org.apache.curator.utils.PathUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.ReflectionUtils;

import io.github.zklock.InvalidLockPathException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Tests for {@link LockPathTemplate}.
 */
class LockPathTemplateTests {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	@Test
	void literalTemplateResolvesToItself() {
		LockPathTemplate template = parse("/orders/global");
		assertThat(template.isLiteral()).isTrue();
		assertThat(template.getSource()).isEqualTo("/orders/global");
		assertThat(template.resolve(new StandardEvaluationContext())).isEqualTo("/orders/global");
	}

	@Test
	void templateWithExpressionIsNotLiteral() {
		LockPathTemplate template = parse("/orders/#{#id}");
		assertThat(template.isLiteral()).isFalse();
		assertThat(template.getSource()).isEqualTo("/orders/#{#id}");
	}

	@Test
	void resolvesArgumentByPosition() {
		assertThat(parse("/orders/#{#p0}").resolve(methodContext("o-1", 7L))).isEqualTo("/orders/o-1");
		assertThat(parse("/orders/#{#a1}").resolve(methodContext("o-1", 7L))).isEqualTo("/orders/7");
	}

	@Test
	void resolvesArgumentByName() {
		assertThat(parse("/orders/#{#orderId}/lines/#{#line}").resolve(methodContext("o-1", 7L)))
			.isEqualTo("/orders/o-1/lines/7");
	}

	@Test
	void resolvesNestedProperty() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("order", new Order("o-42", new Customer("c-7")));
		assertThat(parse("/orders/#{#order.id}").resolve(context)).isEqualTo("/orders/o-42");
		assertThat(parse("/customers/#{#order.customer.id}/orders").resolve(context))
			.isEqualTo("/customers/c-7/orders");
	}

	@Test
	void convertsNumbersToStrings() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("id", 42L);
		context.setVariable("amount", new BigDecimal("12.50"));
		context.setVariable("count", 3);
		assertThat(parse("/n/#{#id}/#{#amount}/#{#count + 1}").resolve(context)).isEqualTo("/n/42/12.50/4");
	}

	@Test
	void resolvesSeveralExpressionsInOneSegment() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("a", "x");
		context.setVariable("b", "y");
		assertThat(parse("/pair/#{#a}-#{#b}").resolve(context)).isEqualTo("/pair/x-y");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "a/b|/stock/a%2Fb/items", ".|/stock/%2E/items", "..|/stock/%2E%2E/items",
			"../..|/stock/..%2F../items", "/|/stock/%2F/items", "%2F|/stock/%252F/items" })
	void keepsValueInsideOneSegment(String value, String expected) {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("sku", value);
		String path = parse("/stock/#{#sku}/items").resolve(context);
		assertThat(path).isEqualTo(expected);
		assertThat(path.split("/")).hasSize(4);
		assertThatNoException().isThrownBy(() -> PathUtils.validatePath(path));
	}

	@Test
	void rejectsNullValue() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("sku", null);
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> parse("/stock/#{#sku}").resolve(context))
			.withMessageContaining("/stock/#{#sku}")
			.withMessageContaining("null");
	}

	@Test
	void rejectsMissingVariable() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> parse("/stock/#{#sku}").resolve(new StandardEvaluationContext()));
	}

	@Test
	void rejectsNullArgument() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> parse("/orders/#{#orderId}").resolve(methodContext(null, 7L)));
	}

	@Test
	void rejectsEmptyValue() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("sku", "");
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> parse("/stock/#{#sku}").resolve(context))
			.withMessageContaining("empty");
	}

	@Test
	void rejectsExpressionThatFails() {
		StandardEvaluationContext context = new StandardEvaluationContext();
		context.setVariable("order", null);
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> parse("/orders/#{#order.id}").resolve(context))
			.withMessageContaining("#order.id");
	}

	@Test
	void rejectsMalformedTemplateAtParse() {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> parse("/x/#{#a"))
			.withMessageContaining("/x/#{#a");
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> parse("/x/#{#a +}"));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> parse("/x/#{}"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "x", "stock/#{#sku}", "#{#sku}", "/", "/a/", "/a//b", "//a", "/a/./b", "/a/../b",
			"/a/.", "/a/#{#sku}/", "/a/#{#sku}//b", "/a\u0000b", "/a\u0001b", "/a\ud801" })
	void rejectsIllegalPathAtParse(String template) {
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> parse(template));
	}

	@Test
	void rejectsNullTemplateAtParse() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> LockPathTemplate.parse(null, this.parser));
	}

	private LockPathTemplate parse(String template) {
		return LockPathTemplate.parse(template, this.parser);
	}

	private static EvaluationContext methodContext(String orderId, long line) {
		Method method = ReflectionUtils.findMethod(OrderService.class, "lock", String.class, long.class);
		Object[] args = { orderId, line };
		return new MethodBasedEvaluationContext(new OrderService(), method, args, new DefaultParameterNameDiscoverer());
	}

	static class OrderService {

		void lock(String orderId, long line) {
		}

	}

	static class Order {

		private final String id;

		private final Customer customer;

		Order(String id, Customer customer) {
			this.id = id;
			this.customer = customer;
		}

		public String getId() {
			return this.id;
		}

		public Customer getCustomer() {
			return this.customer;
		}

	}

	static class Customer {

		private final String id;

		Customer(String id) {
			this.id = id;
		}

		public String getId() {
			return this.id;
		}

	}

}
