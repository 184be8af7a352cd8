package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"lembas/internal/db"
	"lembas/internal/fault"
	"lembas/internal/llm"
)

// ErrNoModel is returned when a model does not exist.
var ErrNoModel = fault.New(fault.NotFound, "That model does not exist.")

// Limits on a model's settings.
const (
	MaxDisplayName   = 80
	MaxDescription   = 500
	MaxSystemPrompt  = 20000
	MaxContextLength = 100_000_000
	MaxMaxTokens     = 1_000_000
)

// Caps are what a model can do. Embedding marks a model that serves
// embeddings rather than chat; it never appears in a picker.
type Caps struct {
	Vision    bool
	Tools     bool
	Reasoning bool
	Embedding bool
}

// Badges names the capabilities that are on, in a fixed order, for the
// picker and the admin list.
func (c Caps) Badges() []string {
	var b []string
	for _, x := range []struct {
		on   bool
		name string
	}{{c.Vision, "vision"}, {c.Tools, "tools"}, {c.Reasoning, "reasoning"}, {c.Embedding, "embedding"}} {
		if x.on {
			b = append(b, x.name)
		}
	}
	return b
}

// Model is one model with everything the administrator set and everything
// the server last said about it.
type Model struct {
	ID                string
	ConnectionID      string
	ConnectionName    string
	ConnectionEnabled bool
	UpstreamName      string // the name the server knows it by; sent in requests
	DisplayName       string // "" means show UpstreamName; see Name
	Description       string
	HasAvatar         bool
	Position          int // the picker's order, 0 first
	Pinned            bool
	Enabled           bool
	Hidden            bool
	IsDefault         bool // the instance default
	// Available is false when the server stopped listing the model at the
	// last discovery. Its row and settings are kept.
	Available  bool
	Caps       Caps
	CapsSource Source
	// ContextLength 0 means unknown, never small.
	ContextLength       int
	ContextLengthSource Source
	// Defaults seeded onto new chats. Nil means no default. Effort "" means
	// no default and EffortOff a default of no reasoning.
	Temperature  *float64
	TopP         *float64
	MaxTokens    *int
	Effort       string
	SystemPrompt string
	// What the server stated at the last discovery; "" when it did not.
	OwnedBy             string
	UpstreamDescription string
	PromptPrice         string // USD per token, as stated
	CompletionPrice     string
	// Restricted means only members of some groups (and administrators)
	// may use the model.
	Restricted bool
	// GroupIDs lists those groups; filled by GetModel only.
	GroupIDs  []string
	CreatedAt time.Time
	UpdatedAt time.Time

	avatarFile string
}

// Name is what a person sees: the display name, or the upstream name when
// none is set.
func (m Model) Name() string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.UpstreamName
}

// AvatarURL is the path the avatar is served at, "" without one. The file
// name is part of it so a replaced picture is never served from a cache.
func (m Model) AvatarURL() string { return avatarURL(m.ID, m.avatarFile) }

func avatarURL(id, file string) string {
	if file == "" {
		return ""
	}
	v := strings.TrimSuffix(file, ".png")
	v = v[:min(len(v), 8)]
	return "/models/" + url.PathEscape(id) + "/avatar?v=" + url.QueryEscape(v)
}

const modelColumns = `m.id, m.connection_id, c.name, c.enabled, m.upstream_name, m.display_name, m.description,
	m.avatar_file, m.position, m.pinned, m.enabled, m.hidden, m.is_default, m.available,
	m.vision, m.tools, m.reasoning, m.embedding, m.caps_source, m.context_length, m.context_length_source,
	m.temperature, m.top_p, m.max_tokens, m.effort, m.system_prompt,
	m.upstream_owned_by, m.upstream_description, m.upstream_prompt_price, m.upstream_completion_price,
	m.created_at, m.updated_at,
	EXISTS (SELECT 1 FROM model_groups mg WHERE mg.model_id = m.id)`

const modelFrom = ` FROM models m JOIN connections c ON c.id = m.connection_id`

func scanModel(sc scanner, extra ...any) (Model, error) {
	var m Model
	var capsSrc, ctxSrc string
	var temp, topP sql.NullFloat64
	var maxTok sql.NullInt64
	var effort sql.NullString
	var created, updated int64
	dest := []any{&m.ID, &m.ConnectionID, &m.ConnectionName, &m.ConnectionEnabled, &m.UpstreamName,
		&m.DisplayName, &m.Description, &m.avatarFile, &m.Position, &m.Pinned, &m.Enabled, &m.Hidden,
		&m.IsDefault, &m.Available, &m.Caps.Vision, &m.Caps.Tools, &m.Caps.Reasoning, &m.Caps.Embedding,
		&capsSrc, &m.ContextLength, &ctxSrc, &temp, &topP, &maxTok, &effort, &m.SystemPrompt,
		&m.OwnedBy, &m.UpstreamDescription, &m.PromptPrice, &m.CompletionPrice, &created, &updated,
		&m.Restricted}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return m, err
	}
	m.CapsSource, m.ContextLengthSource = Source(capsSrc), Source(ctxSrc)
	if temp.Valid {
		m.Temperature = &temp.Float64
	}
	if topP.Valid {
		m.TopP = &topP.Float64
	}
	if maxTok.Valid {
		n := int(maxTok.Int64)
		m.MaxTokens = &n
	}
	m.Effort = effort.String
	m.HasAvatar = m.avatarFile != ""
	m.CreatedAt, m.UpdatedAt = db.Time(created), db.Time(updated)
	return m, nil
}

// GetModel loads one model with its groups.
func (s *Service) GetModel(ctx context.Context, id string) (Model, error) {
	m, err := scanModel(s.db.R.QueryRowContext(ctx, `SELECT `+modelColumns+modelFrom+` WHERE m.id = ?`, id))
	if err != nil {
		return Model{}, noRows(err, "model "+id, ErrNoModel)
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT group_id FROM model_groups WHERE model_id = ? ORDER BY group_id`, id)
	if err != nil {
		return Model{}, fmt.Errorf("catalog: model %s: groups: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return Model{}, fmt.Errorf("catalog: model %s: groups: %w", id, err)
		}
		m.GroupIDs = append(m.GroupIDs, g)
	}
	if err := rows.Err(); err != nil {
		return Model{}, fmt.Errorf("catalog: model %s: groups: %w", id, err)
	}
	return m, nil
}

// Tabs of the admin model list.
const (
	TabAll         = "all"
	TabEnabled     = "enabled"     // enabled and still listed upstream
	TabHidden      = "hidden"      // hidden from the picker
	TabDisabled    = "disabled"    // switched off
	TabUnavailable = "unavailable" // no longer listed upstream
)

// Filter selects a page of the admin model list.
type Filter struct {
	Query        string // matches display name, upstream name or description
	Tab          string // one of the Tab constants; "" means all
	ConnectionID string // "" means every connection
	Capability   string // vision, tools, reasoning or embedding; "" means any
	Limit        int    // 0 means 50; at most 500
	Offset       int
}

// ListModels returns a page of models in position order, and how many
// match in all.
func (s *Service) ListModels(ctx context.Context, f Filter) ([]Model, int, error) {
	var where []string
	var args []any
	switch f.Tab {
	case "", TabAll:
	case TabEnabled:
		where = append(where, "m.enabled = 1 AND m.available = 1")
	case TabHidden:
		where = append(where, "m.hidden = 1")
	case TabDisabled:
		where = append(where, "m.enabled = 0")
	case TabUnavailable:
		where = append(where, "m.available = 0")
	default:
		return nil, 0, fault.Field("tab", "Unknown tab.")
	}
	switch f.Capability {
	case "":
	case "vision", "tools", "reasoning", "embedding":
		where = append(where, "m."+f.Capability+" = 1") // one of four names, checked above
	default:
		return nil, 0, fault.Field("capability", "Unknown capability.")
	}
	if f.ConnectionID != "" {
		where = append(where, "m.connection_id = ?")
		args = append(args, f.ConnectionID)
	}
	if q := strings.TrimSpace(f.Query); q != "" {
		like := "%" + escapeLike(q) + "%"
		where = append(where, `(m.display_name LIKE ? ESCAPE '\' OR m.upstream_name LIKE ? ESCAPE '\' OR m.description LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	offset := max(f.Offset, 0)

	rows, err := s.db.R.QueryContext(ctx,
		`SELECT `+modelColumns+`, COUNT(*) OVER ()`+modelFrom+cond+` ORDER BY m.position, m.id LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("catalog: list models: %w", err)
	}
	defer rows.Close()
	var out []Model
	total := 0
	for rows.Next() {
		m, err := scanModel(rows, &total)
		if err != nil {
			return nil, 0, fmt.Errorf("catalog: list models: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("catalog: list models: %w", err)
	}
	if len(out) == 0 && offset > 0 {
		// A page past the end has no row to carry the count.
		if err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*)`+modelFrom+cond, args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("catalog: count models: %w", err)
		}
	}
	return out, total, nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ModelForm is the model settings form as submitted, every value as text
// so that an empty field can mean "no default" and a bad one can be named.
// Field names in errors are the form's: display_name, description,
// system_prompt, context_length, temperature, top_p, max_tokens, effort.
type ModelForm struct {
	DisplayName  string
	Description  string
	SystemPrompt string
	// ContextLength "" or "0" means unknown. Setting a number makes it the
	// administrator's, which discovery then leaves alone; clearing it lets
	// discovery fill it again.
	ContextLength string
	Temperature   string // "" means no default; 0–2
	TopP          string // "" means no default; 0–1
	MaxTokens     string // "" means no default; 1–1,000,000
	Effort        string // "" means no default; or one of Efforts()
	// Caps as ticked. Changing any makes the capabilities the
	// administrator's, which discovery then leaves alone.
	Caps Caps
}

// ParseModelForm reads a submitted model settings form. The checkboxes are
// vision, tools, reasoning and embedding.
func ParseModelForm(form url.Values) ModelForm {
	return ModelForm{
		DisplayName:   form.Get("display_name"),
		Description:   form.Get("description"),
		SystemPrompt:  form.Get("system_prompt"),
		ContextLength: form.Get("context_length"),
		Temperature:   form.Get("temperature"),
		TopP:          form.Get("top_p"),
		MaxTokens:     form.Get("max_tokens"),
		Effort:        form.Get("effort"),
		Caps: Caps{
			Vision:    checkbox(form.Get("vision")),
			Tools:     checkbox(form.Get("tools")),
			Reasoning: checkbox(form.Get("reasoning")),
			Embedding: checkbox(form.Get("embedding")),
		},
	}
}

// FormOf fills the settings form from a model, for the edit page.
func FormOf(m Model) ModelForm {
	f := ModelForm{
		DisplayName: m.DisplayName, Description: m.Description, SystemPrompt: m.SystemPrompt,
		Effort: m.Effort, Caps: m.Caps,
	}
	if m.ContextLength > 0 {
		f.ContextLength = strconv.Itoa(m.ContextLength)
	}
	if m.Temperature != nil {
		f.Temperature = strconv.FormatFloat(*m.Temperature, 'f', -1, 64)
	}
	if m.TopP != nil {
		f.TopP = strconv.FormatFloat(*m.TopP, 'f', -1, 64)
	}
	if m.MaxTokens != nil {
		f.MaxTokens = strconv.Itoa(*m.MaxTokens)
	}
	return f
}

// modelSettings is a ModelForm checked and converted.
type modelSettings struct {
	displayName, description, systemPrompt string
	contextLength                          int
	temperature, topP                      any // float64 or nil
	maxTokens                              any // int or nil
	effort                                 any // string or nil
	caps                                   Caps
}

func validateModelForm(f ModelForm) (modelSettings, error) {
	var v modelSettings
	v.displayName = strings.TrimSpace(f.DisplayName)
	if utf8.RuneCountInString(v.displayName) > MaxDisplayName {
		return v, fault.Field("display_name", fmt.Sprintf("A display name has at most %d characters.", MaxDisplayName))
	}
	if strings.IndexFunc(v.displayName, unicode.IsControl) >= 0 {
		return v, fault.Field("display_name", "A display name cannot contain line breaks or control characters.")
	}
	v.description = strings.TrimSpace(strings.ReplaceAll(f.Description, "\r\n", "\n"))
	if utf8.RuneCountInString(v.description) > MaxDescription {
		return v, fault.Field("description", fmt.Sprintf("A description has at most %d characters.", MaxDescription))
	}
	v.systemPrompt = strings.TrimSpace(strings.ReplaceAll(f.SystemPrompt, "\r\n", "\n"))
	if utf8.RuneCountInString(v.systemPrompt) > MaxSystemPrompt {
		return v, fault.Field("system_prompt", fmt.Sprintf("A system prompt has at most %d characters.", MaxSystemPrompt))
	}
	if s := strings.TrimSpace(f.ContextLength); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > MaxContextLength {
			return v, fault.Field("context_length", "The context length is a whole number of tokens, or empty when unknown.")
		}
		v.contextLength = n
	}
	var err error
	if v.temperature, err = optionalFloat(f.Temperature, "temperature", 0, 2,
		"The temperature is a number from 0 to 2, or empty for no default."); err != nil {
		return v, err
	}
	if v.topP, err = optionalFloat(f.TopP, "top_p", 0, 1,
		"Top P is a number from 0 to 1, or empty for no default."); err != nil {
		return v, err
	}
	if s := strings.TrimSpace(f.MaxTokens); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxMaxTokens {
			return v, fault.Field("max_tokens", "Max tokens is a whole number from 1 to 1,000,000, or empty for no default.")
		}
		v.maxTokens = n
	}
	switch e := strings.ToLower(strings.TrimSpace(f.Effort)); {
	case e == "":
	case ValidEffort(e):
		v.effort = e
	default:
		return v, fault.Field("effort", "The effort is low, medium, high or off, or empty for no default.")
	}
	v.caps = f.Caps
	return v, nil
}

func optionalFloat(s, field string, lo, hi float64, msg string) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return nil, fault.Field(field, msg)
	}
	return x, nil
}

// UpdateModel saves a model's settings form. The form is the whole set:
// every field in it is written, so a page must post all of them (FormOf
// fills them from the stored model).
func (s *Service) UpdateModel(ctx context.Context, id string, f ModelForm) (Model, error) {
	v, err := validateModelForm(f)
	if err != nil {
		return Model{}, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var cur Caps
		var capsSrc, ctxSrc string
		var ctxLen int
		err := tx.QueryRowContext(ctx,
			`SELECT vision, tools, reasoning, embedding, caps_source, context_length, context_length_source FROM models WHERE id = ?`, id).
			Scan(&cur.Vision, &cur.Tools, &cur.Reasoning, &cur.Embedding, &capsSrc, &ctxLen, &ctxSrc)
		if err != nil {
			return noRows(err, "model "+id, ErrNoModel)
		}
		if v.caps != cur {
			capsSrc = string(SourceAdmin)
		}
		if v.contextLength != ctxLen {
			ctxSrc = string(SourceAdmin)
			if v.contextLength == 0 {
				ctxSrc = string(SourceNone) // cleared: discovery may fill it again
			}
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE models SET display_name = ?, description = ?, system_prompt = ?,
			   context_length = ?, context_length_source = ?, temperature = ?, top_p = ?, max_tokens = ?, effort = ?,
			   vision = ?, tools = ?, reasoning = ?, embedding = ?, caps_source = ?, updated_at = ?
			 WHERE id = ?`,
			v.displayName, v.description, v.systemPrompt, v.contextLength, ctxSrc,
			v.temperature, v.topP, v.maxTokens, v.effort,
			v.caps.Vision, v.caps.Tools, v.caps.Reasoning, v.caps.Embedding, capsSrc, s.nowMillis(), id)
		if err != nil {
			return fmt.Errorf("catalog: update model %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Model{}, err
	}
	return s.GetModel(ctx, id)
}

func (s *Service) setFlag(ctx context.Context, id, column string, on bool) error {
	// column is one of our own names, never input.
	res, err := s.db.W.ExecContext(ctx, `UPDATE models SET `+column+` = ?, updated_at = ? WHERE id = ?`,
		boolInt(on), s.nowMillis(), id)
	return oneRow(res, err, "model "+id+": set "+column, ErrNoModel)
}

// SetPinned pins a model to the sidebar's shortcuts or unpins it. Pinning
// never changes the order.
func (s *Service) SetPinned(ctx context.Context, id string, pinned bool) error {
	return s.setFlag(ctx, id, "pinned", pinned)
}

// SetEnabled switches a model on or off for everyone.
func (s *Service) SetEnabled(ctx context.Context, id string, enabled bool) error {
	return s.setFlag(ctx, id, "enabled", enabled)
}

// SetHidden takes a model out of the picker (or puts it back) while
// keeping it usable where the system chooses it, such as for titles.
func (s *Service) SetHidden(ctx context.Context, id string, hidden bool) error {
	return s.setFlag(ctx, id, "hidden", hidden)
}

// SetDefault makes id the instance default, unsetting the previous one in
// the same transaction; "" clears the default.
func (s *Service) SetDefault(ctx context.Context, id string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if id != "" {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM models WHERE id = ?`, id).Scan(&one); err != nil {
				return noRows(err, "model "+id, ErrNoModel)
			}
		}
		now := s.nowMillis()
		if _, err := tx.ExecContext(ctx, `UPDATE models SET is_default = 0, updated_at = ? WHERE is_default = 1 AND id != ?`, now, id); err != nil {
			return fmt.Errorf("catalog: set default: %w", err)
		}
		if id == "" {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET is_default = 1, updated_at = ? WHERE id = ? AND is_default = 0`, now, id); err != nil {
			return fmt.Errorf("catalog: set default %s: %w", id, err)
		}
		return nil
	})
}

// BulkAction is what Bulk does to each model.
type BulkAction string

const (
	BulkEnable  BulkAction = "enable"
	BulkDisable BulkAction = "disable"
	BulkHide    BulkAction = "hide"
	BulkShow    BulkAction = "show"
)

// Bulk applies one action to many models at once and returns how many
// exist. Ids that no longer exist are skipped.
func (s *Service) Bulk(ctx context.Context, ids []string, action BulkAction) (int, error) {
	var set string
	switch action {
	case BulkEnable:
		set = "enabled = 1"
	case BulkDisable:
		set = "enabled = 0"
	case BulkHide:
		set = "hidden = 1"
	case BulkShow:
		set = "hidden = 0"
	default:
		return 0, fault.Field("action", "Unknown action.")
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if len(ids) > 10000 {
		return 0, fault.New(fault.TooLarge, "Too many models at once.")
	}
	res, err := s.db.W.ExecContext(ctx,
		`UPDATE models SET `+set+`, updated_at = ? WHERE id IN (`+placeholders(len(ids))+`)`,
		append([]any{s.nowMillis()}, anys(ids)...)...)
	if err != nil {
		return 0, fmt.Errorf("catalog: bulk %s: %w", action, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("catalog: bulk %s: %w", action, err)
	}
	return int(n), nil
}

// SetGroups restricts a model to members of groupIDs; none makes it open
// to everyone.
func (s *Service) SetGroups(ctx context.Context, modelID string, groupIDs []string) error {
	seen := map[string]bool{}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM models WHERE id = ?`, modelID).Scan(&one); err != nil {
			return noRows(err, "model "+modelID, ErrNoModel)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM model_groups WHERE model_id = ?`, modelID); err != nil {
			return fmt.Errorf("catalog: model %s: groups: %w", modelID, err)
		}
		for _, g := range groupIDs {
			if g == "" || seen[g] {
				continue
			}
			seen[g] = true
			_, err := tx.ExecContext(ctx, `INSERT INTO model_groups (model_id, group_id) VALUES (?, ?)`, modelID, g)
			if isForeignKeyViolation(err) {
				return fault.Field("groups", "One of those groups no longer exists. Reload the page and try again.")
			}
			if err != nil {
				return fmt.Errorf("catalog: model %s: groups: %w", modelID, err)
			}
		}
		return nil
	})
}

// DeleteModel removes a model (most useful for one no longer available
// upstream) with its avatar file, and closes the gap in the order. If the
// server still lists it, the next discovery adds it back as new.
func (s *Service) DeleteModel(ctx context.Context, id string) error {
	var file string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT avatar_file FROM models WHERE id = ?`, id).Scan(&file); err != nil {
			return noRows(err, "model "+id, ErrNoModel)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM models WHERE id = ?`, id); err != nil {
			return fmt.Errorf("catalog: delete model %s: %w", id, err)
		}
		return renumber(ctx, tx)
	})
	if err != nil {
		return err
	}
	s.removeAvatarFile(file)
	return nil
}

// EndpointFor returns a model with the endpoint that serves it, for
// building a request. It checks nothing about who asks: call CanUse first.
func (s *Service) EndpointFor(ctx context.Context, modelID string) (llm.Endpoint, Model, error) {
	m, err := s.GetModel(ctx, modelID)
	if err != nil {
		return llm.Endpoint{}, Model{}, err
	}
	c, err := s.GetConnection(ctx, m.ConnectionID)
	if err != nil {
		return llm.Endpoint{}, Model{}, err
	}
	ep, err := s.Endpoint(c)
	if err != nil {
		return llm.Endpoint{}, Model{}, err
	}
	return ep, m, nil
}
