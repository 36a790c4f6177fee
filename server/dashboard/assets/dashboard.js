// Package Firewall dashboard: the little client code the pages need. Everything works without it
// except the live diagram updates and the copy buttons.
;(function () {
  'use strict'

  // Forms with data-confirm ask before posting (deletes, rotations).
  document.addEventListener('submit', function (event) {
    var form = event.target
    var message = form && form.getAttribute && form.getAttribute('data-confirm')
    if (message && !window.confirm(message)) event.preventDefault()
  })

  // Copy buttons next to secrets and new tokens.
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('[data-copy]')
    if (!button || !navigator.clipboard) return
    navigator.clipboard.writeText(button.getAttribute('data-copy')).then(function () {
      button.textContent = 'Copied'
    })
  })

  // Live diagrams: an EventSource per figure moves the highlight and fills live fields.
  function describe(value) {
    if (typeof value === 'string') return value
    return Object.keys(value || {})
      .map(function (key) {
        return key + '.' + describe(value[key])
      })
      .join(', ')
  }

  function apply(figure, message) {
    var active = {}
    message.paths.forEach(function (path) {
      active[path] = true
    })
    figure.querySelectorAll('[data-state]').forEach(function (node) {
      node.classList.toggle('is-active', !!active[node.getAttribute('data-state')])
    })
    var name = describe(message.value)
    figure.setAttribute('data-live-state', name)
    // Every state seen, in order: lets a reader (or a test) follow quick transitions.
    var seen = figure.getAttribute('data-seen')
    figure.setAttribute('data-seen', seen ? seen + ' ' + name : name)
    var fields = Object.assign({ path: name }, message.fields || {})
    Object.keys(fields).forEach(function (key) {
      document.querySelectorAll('[data-live-field="' + key + '"]').forEach(function (el) {
        el.textContent = fields[key] === null || fields[key] === undefined ? '—' : String(fields[key])
      })
    })
  }

  document.querySelectorAll('[data-live-src]').forEach(function (figure) {
    if (!window.EventSource) return
    var status = figure.querySelector('[data-live-status]')
    var source = new EventSource(figure.getAttribute('data-live-src'))
    source.addEventListener('open', function () {
      figure.classList.add('is-live')
      if (status) status.textContent = 'live'
    })
    source.addEventListener('state', function (event) {
      apply(figure, JSON.parse(event.data))
    })
    source.addEventListener('error', function () {
      figure.classList.remove('is-live')
      if (status) status.textContent = 'reconnecting…'
    })
  })

  // Rule selector builders: the JSON preview follows the fields. Same names and reading as the
  // server's selector-builder.ts (readDraft + selectorOf); the table comes from the page.
  function readNode(form, path, functions) {
    var field = function (name) {
      var el = form.elements.namedItem(path + '.' + name)
      return el ? el.value : undefined
    }
    var name = field('name') || ''
    var fn = { name: name }
    var entry = Object.prototype.hasOwnProperty.call(functions, name) ? functions[name] : null
    if (!entry) return { function: fn }
    entry.args.forEach(function (arg) {
      var value = (field(arg) || '').trim()
      if (arg === 'patterns') fn.patterns = value.split(/[\s,]+/).filter(Boolean)
      else if (arg === 'minSeverity') {
        if (value) fn.minSeverity = value
      } else if (arg === 'minCvss') {
        if (value) fn.minCvss = Number(value)
      } else fn[arg] = value
    })
    var children = []
    for (var i = 0; i < 50 && field(i + '.name') !== undefined; i++)
      children.push(readNode(form, path + '.' + i, functions))
    if (entry.children === 'many') fn.selectors = children
    if (entry.children === 'one' && children[0]) fn.selector = children[0]
    return { function: fn }
  }

  document.querySelectorAll('[data-selector-builder]').forEach(function (builder) {
    var form = builder.closest('form')
    var preview = builder.querySelector('[data-selector-json]')
    var functions = JSON.parse(builder.getAttribute('data-selector-functions'))
    var root = builder.getAttribute('data-selector-builder')
    if (!form || !preview) return
    var update = function () {
      preview.textContent = JSON.stringify(readNode(form, root, functions), null, 2)
    }
    form.addEventListener('input', update)
    form.addEventListener('change', update)
  })
})()
