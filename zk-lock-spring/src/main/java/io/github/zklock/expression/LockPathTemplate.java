package io.github.zklock.expression;

import java.util.ArrayList;
import java.util.List;

import org.apache.curator.utils.PathUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;

import io.github.zklock.InvalidLockPathException;

/**
 * A parsed lock path such as {@code /stock/#{#sku}}: literal text and SpEL expressions in
 * {@code #{...}} delimiters, parsed once. Each expression value is converted to a string and
 * {@link PathSegmentEncoder encoded}, so it cannot add, remove or climb path segments.
 *
 * <p>Immutable and thread-safe.
 */
public final class LockPathTemplate {

	private static final String PLACEHOLDER = "x";

	private final String source;

	private final List<Object> parts;

	private LockPathTemplate(String source, List<Object> parts) {
		this.source = source;
		this.parts = parts;
	}

	/**
	 * Parse a template and validate its literal part: it must start with {@code /}, name a znode
	 * below the root, and be a legal ZooKeeper path with any value in place of each expression.
	 * @param template the template text
	 * @param parser the SpEL parser
	 * @return the parsed template
	 * @throws InvalidLockPathException if the template is empty, malformed or not a legal path
	 */
	public static LockPathTemplate parse(String template, ExpressionParser parser) {
		if (template == null || template.isEmpty()) {
			throw new InvalidLockPathException("Lock path template must not be empty");
		}
		Expression expression;
		try {
			expression = parser.parseExpression(template, ParserContext.TEMPLATE_EXPRESSION);
		}
		catch (ParseException ex) {
			throw new InvalidLockPathException(
					"Malformed lock path template '" + template + "': " + ex.getMessage(), ex);
		}
		List<Object> parts = new ArrayList<>();
		Expression[] pieces = (expression instanceof CompositeStringExpression composite) ? composite.getExpressions()
				: new Expression[] { expression };
		StringBuilder shape = new StringBuilder();
		for (Expression piece : pieces) {
			if (piece instanceof LiteralExpression literal) {
				parts.add(literal.getExpressionString());
				shape.append(literal.getExpressionString());
			}
			else {
				parts.add(piece);
				shape.append(PLACEHOLDER);
			}
		}
		validateShape(template, shape.toString());
		return new LockPathTemplate(template, List.copyOf(parts));
	}

	/**
	 * Return the template text as written.
	 * @return the template
	 */
	public String getSource() {
		return this.source;
	}

	/**
	 * Return whether the template has no expression, so that it resolves to itself.
	 * @return whether the template is a literal path
	 */
	public boolean isLiteral() {
		return this.parts.size() == 1 && this.parts.get(0) instanceof String;
	}

	/**
	 * Resolve the template: evaluate each expression, convert it to a string and encode it.
	 * @param context the evaluation context (method arguments, beans)
	 * @return the lock path
	 * @throws InvalidLockPathException if an expression fails, or is {@code null} or empty
	 */
	public String resolve(EvaluationContext context) {
		StringBuilder path = new StringBuilder(64);
		for (Object part : this.parts) {
			if (part instanceof String literal) {
				path.append(literal);
			}
			else {
				path.append(PathSegmentEncoder.encode(evaluate((Expression) part, context)));
			}
		}
		return path.toString();
	}

	private String evaluate(Expression expression, EvaluationContext context) {
		String value;
		try {
			value = expression.getValue(context, String.class);
		}
		catch (EvaluationException ex) {
			throw new InvalidLockPathException("Lock path template '" + this.source + "': expression '"
					+ expression.getExpressionString() + "' could not be evaluated: " + ex.getMessage(), ex);
		}
		if (value == null || value.isEmpty()) {
			throw new InvalidLockPathException("Lock path template '" + this.source + "': expression '"
					+ expression.getExpressionString() + "' is " + ((value == null) ? "null" : "empty"));
		}
		return value;
	}

	private static void validateShape(String template, String shape) {
		if (!shape.startsWith("/") || shape.equals("/")) {
			throw new InvalidLockPathException("Lock path template '" + template
					+ "' must start with '/' and name a znode below the root path");
		}
		try {
			PathUtils.validatePath(shape);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockPathException(
					"Lock path template '" + template + "' is not a legal ZooKeeper path: " + ex.getMessage(), ex);
		}
	}

	@Override
	public String toString() {
		return this.source;
	}

}
